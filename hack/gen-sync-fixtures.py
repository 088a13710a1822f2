#!/usr/bin/env python3
"""Builds testdata/sync/<case>.request.json in the exact shape Metacontroller
v4.17.2 sends (see ../shared/testdata/metacontroller-sync-request.sample.json):
group keys, every child group present even when empty, full observed objects
with status, managedFields, ownerReferences and the last-applied annotation
Metacontroller writes.

Observed children are made the way the cluster would have made them: the
child stackdome returned for the spec, as Metacontroller applied it (plus the
controller-uid label and the namespace), with the fields the API server
defaults and the status its controllers report. Each request's parent status
is the status stackdome converges to for that observed state (synced until it
feeds back unchanged), so the golden answers hold at any later time.

Run: go build -o bin/stackdome . && python3 hack/gen-sync-fixtures.py
then: go test ./hooks -update  (rewrites the .response.json files)
"""
import copy, json, os, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "testdata", "sync")
BIN = os.path.join(ROOT, "bin", "stackdome")
NOW = "2026-11-29T12:00:00Z"
EARLIER = "2026-11-29T11:40:00Z"  # 20 minutes before NOW: past every grace
LA = "metacontroller.k8s.io/last-applied-configuration"
GROUPS = ["Service.v1", "Deployment.apps/v1", "StatefulSet.apps/v1",
          "Middleware.traefik.io/v1alpha1", "IngressRoute.traefik.io/v1alpha1",
          "HorizontalPodAutoscaler.autoscaling/v2", "EndpointSlice.discovery.k8s.io/v1",
          "PodDisruptionBudget.policy/v1", "NetworkPolicy.networking.k8s.io/v1", "Job.batch/v1", "CronJob.batch/v1"]
# The chart's error-page Service, as the API server stores it: the customize
# hook relates it (by namespace and name, hook version v2) for every spec with
# public ports and error pages on; its ClusterIP goes into the app's own
# EndpointSlice. A ClusterIP is never dialed by the hook.
ERROR_SERVICE_IP = "10.96.48.17"

CONTROLLER = {
    "kind": "CompositeController", "apiVersion": "metacontroller.k8s.io/v1alpha1",
    "metadata": {"name": "stackdome", "uid": "5f0c1d6e-3f1e-4d55-9a3c-2d7e0c9b1a01",
                 "resourceVersion": "412", "generation": 1, "creationTimestamp": "2026-11-29T10:00:00Z",
                 "labels": {"app.kubernetes.io/managed-by": "Helm"}},
    "spec": {
        "parentResource": {"apiVersion": "stackdome.io/v1alpha1", "resource": "stackresources"},
        "childResources": [
            {"apiVersion": av, "resource": r, "updateStrategy": {"method": m, "statusChecks": {}}}
            for av, r, m in [("v1", "services", "InPlace"), ("apps/v1", "deployments", "InPlace"), ("apps/v1", "statefulsets", "InPlace"),
                             ("traefik.io/v1alpha1", "middlewares", "InPlace"), ("traefik.io/v1alpha1", "ingressroutes", "InPlace"),
                             ("autoscaling/v2", "horizontalpodautoscalers", "InPlace"), ("discovery.k8s.io/v1", "endpointslices", "InPlace"),
                             ("policy/v1", "poddisruptionbudgets", "InPlace"), ("networking.k8s.io/v1", "networkpolicies", "InPlace"), ("batch/v1", "jobs", "OnDelete"), ("batch/v1", "cronjobs", "InPlace")]],
        "hooks": {
            "sync": {"version": "v2", "webhook": {"timeout": "5s", "service": {"name": "stackdome", "namespace": "stackdome", "port": 8080, "protocol": "http"}, "path": "/sync"}},
            "customize": {"version": "v2", "webhook": {"timeout": "5s", "service": {"name": "stackdome", "namespace": "stackdome", "port": 8080, "protocol": "http"}, "path": "/customize"}},
        },
        "resyncPeriodSeconds": 60,
        "generateSelector": True,
    },
    "status": {},
}


def uid(n):
    return "%08x-1f2e-4c3d-8b4a-%012x" % (0x5d000000 + n, 0x9e0000000000 + n)


def parent(name, ns, spec, n, generation=1):
    kubectl = {"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource",
               "metadata": {"annotations": {}, "name": name, "namespace": ns}, "spec": spec}
    return {
        "apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource",
        "metadata": {
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": json.dumps(kubectl, separators=(",", ":")) + "\n"},
            "creationTimestamp": "2026-11-29T11:00:00Z", "generation": generation,
            "managedFields": [
                {"apiVersion": "stackdome.io/v1alpha1", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:kubectl.kubernetes.io/last-applied-configuration": {}}},
                              "f:spec": {".": {}, **{"f:" + k: {} for k in spec}}},
                 "manager": "kubectl-client-side-apply", "operation": "Update", "time": "2026-11-29T11:00:00Z"},
                {"apiVersion": "stackdome.io/v1alpha1", "fieldsType": "FieldsV1",
                 "fieldsV1": {"f:status": {".": {}, "f:conditions": {}, "f:observedGeneration": {}, "f:revision": {}}},
                 "manager": "metacontroller", "operation": "Update", "subresource": "status", "time": "2026-11-29T11:00:05Z"}],
            "name": name, "namespace": ns, "resourceVersion": str(1000 + n), "uid": uid(n)},
        "spec": spec,
    }


def sync(req, now=NOW):
    p = subprocess.run([BIN, "sync", "--now", now], input=json.dumps(req).encode(), capture_output=True)
    if p.returncode != 0:
        sys.exit("stackdome sync failed: " + p.stderr.decode())
    return json.loads(p.stdout)


def error_service():
    """The chart's error-page Service in the release namespace, as stored."""
    labels = {"app.kubernetes.io/component": "controller", "app.kubernetes.io/instance": "stackdome",
              "app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/name": "stackdome",
              "app.kubernetes.io/version": "0.1.0", "helm.sh/chart": "stackdome-0.1.0", "stackdome.io/service": "error-pages"}
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": {"annotations": {"meta.helm.sh/release-name": "stackdome", "meta.helm.sh/release-namespace": "stackdome"},
                         "creationTimestamp": "2026-11-29T10:00:00Z", "labels": labels, "name": "stackdome-error-pages",
                         "namespace": "stackdome", "resourceVersion": "377", "uid": uid(900),
                         "managedFields": [{"apiVersion": "v1", "fieldsType": "FieldsV1",
                                            "fieldsV1": {"f:metadata": {"f:labels": {".": {}}}, "f:spec": {"f:ports": {}, "f:selector": {}, "f:type": {}}},
                                            "manager": "helm", "operation": "Update", "time": "2026-11-29T10:00:00Z"}]},
            "spec": {"clusterIP": ERROR_SERVICE_IP, "clusterIPs": [ERROR_SERVICE_IP], "internalTrafficPolicy": "Cluster",
                     "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
                     "ports": [{"name": "errors", "port": 8082, "protocol": "TCP", "targetPort": "errors"}],
                     "selector": {k: labels[k] for k in ("app.kubernetes.io/component", "app.kubernetes.io/instance", "app.kubernetes.io/name")},
                     "sessionAffinity": "None", "type": "ClusterIP"},
            "status": {"loadBalancer": {}}}


# The team's own Traefik Middlewares that exist, by (namespace, name), as the
# API server stores them: the customize hook relates the ones a spec's
# middlewares name, by name in the parent's namespace (the rule's group is
# there whenever the rule is, empty when none of them exists).
TEAM_MIDDLEWARES = {}


def team_middleware(ns, name, spec, n):
    TEAM_MIDDLEWARES[(ns, name)] = {
        "apiVersion": "traefik.io/v1alpha1", "kind": "Middleware",
        "metadata": {"name": name, "namespace": ns, "uid": uid(900 + n), "resourceVersion": str(7000 + n), "generation": 1,
                     "creationTimestamp": "2026-11-29T09:00:00Z",
                     "managedFields": [{"apiVersion": "traefik.io/v1alpha1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}},
                                        "manager": "kubectl-client-side-apply", "operation": "Update", "time": "2026-11-29T09:00:00Z"}]},
        "spec": spec}


def relates_middlewares(par):
    """The spec's middlewares the customize hook relates (a public port and a name)."""
    spec = par["spec"]
    ports = spec.get("ports") if isinstance(spec.get("ports"), list) else []
    mws = spec.get("middlewares") if isinstance(spec.get("middlewares"), list) else []
    return [m["name"] for m in mws if isinstance(m, dict) and m.get("name")] if any(p.get("public") for p in ports) else []


# The ConfigMaps and Secrets of the apps' namespaces that exist, by (kind,
# namespace, name), as the API server stores them: the customize hook relates
# the ones a valid spec uses (files, envFrom, env[].valueFrom) by name in the
# parent's namespace, one rule per kind (the rule's group is there whenever
# the rule is, empty when none of them exists).
TEAM_CONFIG = {}


def team_config(kind, ns, name, data, n, binary=None):
    o = {"apiVersion": "v1", "kind": kind,
         "metadata": {"name": name, "namespace": ns, "uid": uid(950 + n), "resourceVersion": str(7500 + n),
                      "creationTimestamp": "2026-11-29T09:00:00Z",
                      "managedFields": [{"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {}},
                                         "manager": "kubectl-create", "operation": "Update", "time": "2026-11-29T09:00:00Z"}]},
         "data": data}
    if binary:
        o["binaryData"] = binary
    if kind == "Secret":
        o["type"] = "Opaque"
    TEAM_CONFIG[(kind, ns, name)] = o


def config_refs(par):
    """The (kind, name) pairs of the ConfigMaps and Secrets the spec uses, as the customize hook relates them."""
    spec = par["spec"]
    refs = set()
    lists = lambda k: spec.get(k) if isinstance(spec.get(k), list) else []
    for f in lists("files"):
        if isinstance(f, dict):
            if isinstance(f.get("configMap"), dict) and f["configMap"].get("name"):
                refs.add(("ConfigMap", f["configMap"]["name"]))
            if isinstance(f.get("secret"), dict) and f["secret"].get("secretName"):
                refs.add(("Secret", f["secret"]["secretName"]))
    sidecars = [c for c in lists("sidecars") if isinstance(c, dict)]
    side = lambda k: [e for c in sidecars for e in (c.get(k) if isinstance(c.get(k), list) else [])]
    for e in lists("envFrom") + side("envFrom"):
        if isinstance(e, dict):
            if isinstance(e.get("configMapRef"), dict) and e["configMapRef"].get("name"):
                refs.add(("ConfigMap", e["configMapRef"]["name"]))
            if isinstance(e.get("secretRef"), dict) and e["secretRef"].get("name"):
                refs.add(("Secret", e["secretRef"]["name"]))
    for e in lists("env") + side("env"):
        v = e.get("valueFrom") if isinstance(e, dict) else None
        if isinstance(v, dict):
            if isinstance(v.get("configMapKeyRef"), dict) and v["configMapKeyRef"].get("name"):
                refs.add(("ConfigMap", v["configMapKeyRef"]["name"]))
            if isinstance(v.get("secretKeyRef"), dict) and v["secretKeyRef"].get("name"):
                refs.add(("Secret", v["secretKeyRef"]["name"]))
    return sorted(refs)


def mirrors_errors(par):
    """Whether the customize hook relates the error-page Service for this parent."""
    spec = par["spec"]
    ports = spec.get("ports") if isinstance(spec.get("ports"), list) else []
    return any(p.get("public") for p in ports) and spec.get("errorPages", {}).get("enabled", True)


def controller(sync_version):
    """The chart's CompositeController, its sync hook at sync_version."""
    c = copy.deepcopy(CONTROLLER)
    c["spec"]["hooks"]["sync"]["version"] = sync_version
    return c


def request(par, children=None, pods=None, v2=True, errsvc=True, jobs=None):
    """The request Metacontroller v4.17.2 sends to a sync hook at version v2
    (the chart's registration): children and related keyed namespace/name.
    v2=False: to a sync hook at v1 (the chart's registration before 0.2.0):
    keyed by name, and related objects of another namespace than the parent's
    filtered out, their group left empty (UniformObjectMap.Convert;
    reference/metacontroller.md section 17).
    errsvc: the chart's error-page Service is installed (the rule's group
    is there whenever the rule is, empty when nothing matches)."""
    ns = par["metadata"]["namespace"]
    key = (lambda o: o["metadata"]["namespace"] + "/" + o["metadata"]["name"]) if v2 else (lambda o: o["metadata"]["name"])
    ch = {g: {} for g in GROUPS}
    for o in children or []:
        o["metadata"].setdefault("namespace", ns)
        ch[o["kind"] + "." + o["apiVersion"] if o["apiVersion"] != "v1" else o["kind"] + ".v1"][key(o)] = o
    for p in pods or []:
        p["metadata"].setdefault("namespace", ns)
    related = {"Pod.v1": {key(p): p for p in pods or []}}
    if mirrors_errors(par):
        svcs = [error_service()] if errsvc else []
        if not v2:
            svcs = [o for o in svcs if o["metadata"]["namespace"] == ns]
        related["Service.v1"] = {key(o): o for o in svcs}
    names = relates_middlewares(par)
    if names:
        related["Middleware.traefik.io/v1alpha1"] = {key(o): o for o in (copy.deepcopy(TEAM_MIDDLEWARES[(ns, n)]) for n in names if (ns, n) in TEAM_MIDDLEWARES)}
    for kind, name in config_refs(par):
        g = related.setdefault(kind + ".v1", {})
        if (kind, ns, name) in TEAM_CONFIG:
            o = copy.deepcopy(TEAM_CONFIG[(kind, ns, name)])
            g[key(o)] = o
    if par["spec"].get("type") == "CronJob":
        # The Jobs its CronJob made, related by the instance labels (the group is
        # there whenever the rule is, empty when no Job exists yet).
        for j in jobs or []:
            j["metadata"].setdefault("namespace", ns)
        related["Job.batch/v1"] = {key(j): j for j in jobs or []}
    return {"controller": controller("v2" if v2 else "v1"), "parent": par, "children": ch, "related": related, "finalizing": False}


def applied(desired, par):
    """The child as Metacontroller applied it: namespace and controller-uid label added."""
    o = copy.deepcopy(desired)
    o["metadata"]["namespace"] = par["metadata"]["namespace"]
    o["metadata"]["labels"]["controller-uid"] = par["metadata"]["uid"]
    return o


def observed(desired, par, n, extra_spec=None, status=None, annotations=None):
    """A child as the API server stores it after Metacontroller created it."""
    la = applied(desired, par)
    o = copy.deepcopy(la)
    md = o["metadata"]
    md["annotations"] = dict(md.get("annotations", {}), **{LA: json.dumps(la, separators=(",", ":"), sort_keys=True)}, **(annotations or {}))
    md.update({"creationTimestamp": "2026-11-29T11:00:05Z", "generation": 1, "resourceVersion": str(2000 + n), "uid": uid(100 + n),
               "ownerReferences": [{"apiVersion": "stackdome.io/v1alpha1", "blockOwnerDeletion": True, "controller": True,
                                    "kind": "StackResource", "name": par["metadata"]["name"], "uid": par["metadata"]["uid"]}],
               "managedFields": [{"apiVersion": o["apiVersion"], "fieldsType": "FieldsV1",
                                  "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:" + LA: {}}, "f:labels": {".": {}},
                                                              "f:ownerReferences": {".": {}, 'k:{"uid":"%s"}' % par["metadata"]["uid"]: {}}},
                                               "f:spec": {".": {}}},
                                  "manager": "metacontroller", "operation": "Update", "time": "2026-11-29T11:00:05Z"}]})
    if "spec" in o:
        deep_merge(o["spec"], extra_spec or {})
    if status is not None:
        o["status"] = status
    return o


def deep_merge(dst, src):
    for k, v in src.items():
        if isinstance(v, dict) and isinstance(dst.get(k), dict):
            deep_merge(dst[k], v)
        else:
            dst[k] = v


def server_defaults(kind, o):
    """What kube-apiserver v1.37 defaults into a child we did not set."""
    s = o["spec"]
    if kind == "CronJob":
        s.update({"concurrencyPolicy": s.get("concurrencyPolicy", "Allow"), "failedJobsHistoryLimit": s.get("failedJobsHistoryLimit", 1),
                  "successfulJobsHistoryLimit": s.get("successfulJobsHistoryLimit", 3)})
        job_defaults(s["jobTemplate"]["spec"])
        s["jobTemplate"]["metadata"].setdefault("creationTimestamp", None)
    if kind == "Job":
        job_defaults(s)
        juid = o["metadata"]["uid"]
        s["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": juid}}
        s["template"]["metadata"]["labels"].update({"batch.kubernetes.io/controller-uid": juid, "batch.kubernetes.io/job-name": o["metadata"]["name"],
                                                    "controller-uid": juid, "job-name": o["metadata"]["name"]})
        s["manualSelector"] = False
    if kind in ("Deployment", "StatefulSet"):
        t = s["template"]["spec"]
        for c in t.get("initContainers", []) + t["containers"]:
            c.setdefault("imagePullPolicy", "IfNotPresent")
            c.setdefault("terminationMessagePath", "/dev/termination-log")
            c.setdefault("terminationMessagePolicy", "File")
            c.setdefault("resources", {})
            rp = c.get("readinessProbe")
            if rp:
                for k, v in {"failureThreshold": 3, "periodSeconds": 10, "successThreshold": 1, "timeoutSeconds": 1}.items():
                    rp.setdefault(k, v)
        t.update({"dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
                  "securityContext": {}, "terminationGracePeriodSeconds": 30})
        s["template"]["metadata"].setdefault("creationTimestamp", None)
        s.setdefault("revisionHistoryLimit", 10)
    if kind == "Deployment":
        s.update({"progressDeadlineSeconds": 600, "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}, "type": "RollingUpdate"}})
    if kind == "StatefulSet":
        s.update({"podManagementPolicy": "OrderedReady", "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
                  "updateStrategy": {"rollingUpdate": {"partition": 0}, "type": "RollingUpdate"}})
        for v in s.get("volumeClaimTemplates", []):
            v.update({"apiVersion": "v1", "kind": "PersistentVolumeClaim"})
            v["status"] = {"phase": "Pending"}
    if kind == "Service":
        headless = s.get("clusterIP") == "None"
        ip = "None" if headless else "10.96.%d.%d" % (len(o["metadata"]["name"]) % 250, 10 + len(o["metadata"]["name"]))
        s.update({"clusterIP": ip, "clusterIPs": [ip], "internalTrafficPolicy": "Cluster", "ipFamilies": ["IPv4"],
                  "ipFamilyPolicy": "SingleStack", "sessionAffinity": "None"})
        o["status"] = {"loadBalancer": {}}
    return o


def job_defaults(s):
    """What kube-apiserver defaults into a JobSpec and its pod template."""
    s.setdefault("backoffLimit", 6)
    s.update({"completionMode": "NonIndexed", "completions": 1, "parallelism": 1, "podReplacementPolicy": "TerminatingOrFailed", "suspend": False})
    t = s["template"]["spec"]
    for c in t.get("initContainers", []) + t["containers"]:
        c.setdefault("imagePullPolicy", "IfNotPresent")
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        c.setdefault("resources", {})
    t.update({"dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler", "securityContext": t.get("securityContext", {}),
              "terminationGracePeriodSeconds": 30})
    s["template"]["metadata"].setdefault("creationTimestamp", None)


def job_status(result, start="2026-11-29T11:30:00Z", end="2026-11-29T11:31:10Z", failed=0, reason="BackoffLimitExceeded",
               message="Job has reached the specified backoff limit"):
    """A Job's status as the Job controller of v1.37 writes it: running, Complete or Failed."""
    st = {"startTime": start, "terminating": 0, "uncountedTerminatedPods": {}, "ready": 0}
    if result == "Running":
        st.update({"active": 1})
    elif result == "Complete":
        st.update({"succeeded": 1, "completionTime": end, "conditions": [
            {"type": "SuccessCriteriaMet", "status": "True", "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods",
             "lastProbeTime": end, "lastTransitionTime": end},
            {"type": "Complete", "status": "True", "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods",
             "lastProbeTime": end, "lastTransitionTime": end}]})
    else:
        st.update({"failed": failed, "conditions": [
            {"type": "FailureTarget", "status": "True", "reason": reason, "message": message, "lastProbeTime": end, "lastTransitionTime": end},
            {"type": "Failed", "status": "True", "reason": reason, "message": message, "lastProbeTime": end, "lastTransitionTime": end}]})
    if failed and result != "Failed":
        st["failed"] = failed
    return st


def cron_job_run(par, cron, name, n, result, start, end, failed=0):
    """A Job the CronJob controller made from the CronJob's job template, as stored."""
    tmpl = copy.deepcopy(cron["spec"]["jobTemplate"])
    juid = uid(700 + n)
    spec = copy.deepcopy(tmpl["spec"])
    spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": juid}}
    spec["manualSelector"] = False
    spec["template"]["metadata"]["labels"].update({"batch.kubernetes.io/controller-uid": juid, "batch.kubernetes.io/job-name": name,
                                                   "controller-uid": juid, "job-name": name})
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": par["metadata"]["namespace"], "uid": juid, "resourceVersion": str(4000 + n), "generation": 1,
                         "creationTimestamp": start, "labels": dict(tmpl["metadata"]["labels"]),
                         "annotations": {"batch.kubernetes.io/cronjob-scheduled-timestamp": start},
                         "ownerReferences": [{"apiVersion": "batch/v1", "blockOwnerDeletion": True, "controller": True, "kind": "CronJob",
                                              "name": cron["metadata"]["name"], "uid": cron["metadata"]["uid"]}],
                         "managedFields": [{"apiVersion": "batch/v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {}},
                                            "manager": "kube-controller-manager", "operation": "Update", "time": start}]},
            "spec": spec, "status": job_status(result, start, end, failed)}


def job_pod(name, par, job, n, exit_code=None, reason="Error", sidecar=None):
    """A pod of a Job as the Job controller and the kubelet leave it: Running, or Failed
    (restartPolicy Never) with the app's exit code, or Succeeded with 0."""
    tmpl = job["spec"]["template"]
    c0 = tmpl["spec"]["containers"][0]
    started, finished = "2026-11-29T11:30:05Z", "2026-11-29T11:31:00Z"
    if exit_code is None:
        phase, state = "Running", {"running": {"startedAt": started}}
    else:
        phase = "Succeeded" if exit_code == 0 else "Failed"
        state = {"terminated": {"exitCode": exit_code, "reason": "Completed" if exit_code == 0 else reason, "startedAt": started,
                                "finishedAt": finished, "containerID": "containerd://%04x" % (0x3a00 + n)}}
    status = {"phase": phase, "qosClass": "BestEffort", "startTime": "2026-11-29T11:30:01Z", "hostIP": "127.0.0.1", "hostIPs": [{"ip": "127.0.0.1"}],
              "conditions": [{"lastProbeTime": None, "lastTransitionTime": "2026-11-29T11:30:01Z", "status": "True", "type": "PodScheduled"}],
              "containerStatuses": [{"name": "app", "image": c0["image"], "imageID": "", "lastState": {}, "ready": exit_code is None, "restartCount": 0,
                                     "started": exit_code is None, "state": state}]}
    if sidecar:
        status["initContainerStatuses"] = [sidecar]
    md = {"annotations": dict(tmpl["metadata"].get("annotations", {})), "creationTimestamp": "2026-11-29T11:30:01Z",
          "generateName": job["metadata"]["name"] + "-", "generation": 1, "labels": dict(tmpl["metadata"]["labels"]), "name": name,
          "namespace": par["metadata"]["namespace"], "finalizers": ["batch.kubernetes.io/job-tracking"] if exit_code is None else [],
          "ownerReferences": [{"apiVersion": "batch/v1", "blockOwnerDeletion": True, "controller": True, "kind": "Job",
                               "name": job["metadata"]["name"], "uid": job["metadata"]["uid"]}],
          "resourceVersion": str(5000 + n), "uid": uid(800 + n)}
    if not md["finalizers"]:
        del md["finalizers"]
    spec = copy.deepcopy(tmpl["spec"])
    spec.update({"enableServiceLinks": True, "nodeName": "node-1", "preemptionPolicy": "PreemptLowerPriority", "priority": 0,
                 "serviceAccount": "default", "serviceAccountName": "default"})
    return {"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec, "status": status}


def dep_status(replicas, updated, ready, available, generation=1, progressing=("True", "NewReplicaSetAvailable", "ReplicaSet has successfully progressed.")):
    st = {"observedGeneration": generation, "replicas": replicas, "updatedReplicas": updated, "readyReplicas": ready,
          "availableReplicas": available, "terminatingReplicas": 0,
          "conditions": [
              {"lastTransitionTime": "2026-11-29T11:00:10Z", "lastUpdateTime": "2026-11-29T11:00:10Z",
               "message": "Deployment has minimum availability." if available >= replicas else "Deployment does not have minimum availability.",
               "reason": "MinimumReplicasAvailable" if available >= replicas else "MinimumReplicasUnavailable",
               "status": "True" if available >= replicas else "False", "type": "Available"},
              {"lastTransitionTime": "2026-11-29T11:00:05Z", "lastUpdateTime": "2026-11-29T11:00:10Z",
               "message": progressing[2], "reason": progressing[1], "status": progressing[0], "type": "Progressing"}]}
    if ready == 0:
        del st["readyReplicas"]
    if available == 0:
        del st["availableReplicas"]
    return st


def template_hash(rev):
    """A pod-template-hash as the Deployment controller writes it (its alphabet, 9 or 10
    characters), derived from stackdome's revision so that fixtures are stable. It is
    never the revision itself: the controller hashes the stored template, not ours."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    n = int(rev, 16)
    out = ""
    while n and len(out) < 10:
        out += alphabet[n % len(alphabet)]
        n //= len(alphabet)
    return out


def pod(name, par, desired_workload, ip, phase="Running", ready=True, container=None, revision=None, ready_since="2026-11-29T11:00:20Z", n=0):
    tmpl = desired_workload["spec"]["template"]
    rev = revision or tmpl["metadata"]["annotations"]["stackdome.io/revision"]
    c0 = tmpl["spec"]["containers"][0]
    cs = container or {"name": "app", "image": c0["image"], "imageID": "", "lastState": {}, "ready": ready,
                       "restartCount": 0, "started": True, "state": {"running": {"startedAt": "2026-11-29T11:00:12Z"}}}
    rs = "%s-%s" % (par["metadata"]["name"], template_hash(rev))
    status = {"phase": phase, "qosClass": "BestEffort", "startTime": "2026-11-29T11:00:11Z", "hostIP": "127.0.0.1", "hostIPs": [{"ip": "127.0.0.1"}]}
    if phase == "Running":
        status.update({"podIP": ip, "podIPs": [{"ip": ip}], "containerStatuses": [cs],
                       "conditions": [
                           {"lastProbeTime": None, "lastTransitionTime": "2026-11-29T11:00:11Z", "status": "True", "type": "PodReadyToStartContainers"},
                           {"lastProbeTime": None, "lastTransitionTime": "2026-11-29T11:00:11Z", "status": "True", "type": "Initialized"},
                           {"lastProbeTime": None, "lastTransitionTime": ready_since, "status": "True" if ready else "False", "type": "Ready"},
                           {"lastProbeTime": None, "lastTransitionTime": ready_since, "status": "True" if ready else "False", "type": "ContainersReady"},
                           {"lastProbeTime": None, "lastTransitionTime": "2026-11-29T11:00:11Z", "status": "True", "type": "PodScheduled"}]})
    else:
        status["conditions"] = [{"lastProbeTime": None, "lastTransitionTime": "2026-11-29T11:59:50Z", "status": "True", "type": "PodScheduled"}]
        status["containerStatuses"] = [{"name": "app", "image": c0["image"], "imageID": "", "lastState": {}, "ready": False, "restartCount": 0,
                                        "started": False, "state": {"waiting": {"reason": "ContainerCreating"}}}]
    labels = dict(tmpl["metadata"]["labels"], **{"pod-template-hash": template_hash(rev)})
    spec = copy.deepcopy(tmpl["spec"])
    spec.update({"enableServiceLinks": True, "nodeName": "node-1", "preemptionPolicy": "PreemptLowerPriority", "priority": 0,
                 "serviceAccount": "default", "serviceAccountName": "default"})
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"annotations": {"stackdome.io/revision": rev}, "creationTimestamp": "2026-11-29T11:00:10Z",
                         "generateName": rs + "-", "generation": 1, "labels": labels, "name": name,
                         "namespace": par["metadata"]["namespace"],
                         "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": True, "controller": True, "kind": "ReplicaSet", "name": rs, "uid": uid(500 + n)}],
                         "managedFields": [{"apiVersion": "v1", "fieldsType": "FieldsV1",
                                            "fieldsV1": {"f:metadata": {"f:annotations": {".": {}, "f:stackdome.io/revision": {}}, "f:generateName": {}, "f:labels": {".": {}}},
                                                         "f:spec": {"f:containers": {'k:{"name":"app"}': {".": {}, "f:image": {}, "f:name": {}}}}},
                                            "manager": "kube-controller-manager", "operation": "Update", "time": "2026-11-29T11:00:10Z"},
                                           {"apiVersion": "v1", "fieldsType": "FieldsV1",
                                            "fieldsV1": {"f:status": {"f:conditions": {}, "f:containerStatuses": {}, "f:phase": {}, "f:podIP": {}, "f:podIPs": {}}},
                                            "manager": "kubelet", "operation": "Update", "subresource": "status", "time": "2026-11-29T11:00:20Z"}],
                         "resourceVersion": str(3000 + n), "uid": uid(600 + n)},
            "spec": spec, "status": status}


def legacy_status(generation, rev, url, conds, msg, ports, portcheck=None, details=None):
    """A status as the version before checkedAt existed wrote it."""
    st = {"observedGeneration": generation, "revision": rev}
    if url:
        st["url"] = url
    st["conditions"] = [{"type": t, "status": s, "observedGeneration": generation, "lastTransitionTime": EARLIER, "reason": r, "message": msg}
                        for t, (s, r) in zip(["Available", "Converged", "Stalled", "Reconciling"], conds)]
    if details:
        st["lastFailureDetails"] = details
    if portcheck:
        st["portCheck"] = portcheck
    st["ports"] = [{"name": n, "port": pt, "state": state} for n, pt, state in ports]
    return st


def desired_of(req):
    return {c["kind"] + "/" + c["metadata"]["name"]: c for c in sync(req)["children"]}


def converge(req):
    """Feeds stackdome's status back until it is a fixpoint, as Metacontroller would."""
    for _ in range(5):
        st = sync(req)["status"]
        if req["parent"].get("status") == st:
            return req
        req["parent"]["status"] = st
    sys.exit("status did not converge for " + req["parent"]["metadata"]["name"])


def settled(par, pods=None, errsvc=True, v2=True):
    """The children stackdome answers once what it answered is observed:
    the IngressRoute refers to the errors Middleware only once the Middleware,
    the mirrored Service and its EndpointSlice exist."""
    d = desired_of(request(par, errsvc=errsvc, v2=v2))
    for _ in range(3):
        objs = observe_all(par, d, 0, None)
        nxt = desired_of(request(par, objs, copy.deepcopy(pods), errsvc=errsvc, v2=v2))
        if nxt == d:
            return d
        d = nxt
    sys.exit("children did not settle for " + par["metadata"]["name"])


def observe_all(par, desired, n, workload_status, workload_kind="Deployment", drop=()):
    out = []
    for i, (k, d) in enumerate(sorted(desired.items())):
        if k in drop:
            continue
        kind = d["kind"]
        st = workload_status if kind == workload_kind else None
        o = observed(d, par, n * 10 + i, status=st)
        if kind in ("Deployment", "StatefulSet", "Service", "Job", "CronJob"):
            server_defaults(kind, o)
        out.append(o)
    return out


def write(case, req, v2=False):
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, case + ".request.json"), "w") as f:
        json.dump(req, f, indent=1, sort_keys=False)
        f.write("\n")


def main():
    cases = {}
    n = 0

    def new(name, ns, spec):
        nonlocal n
        n += 1
        return parent(name, ns, spec, n), n

    # 1. single port, first syncs: nothing created yet.
    p, _ = new("api", "shop", {"type": "Service", "image": "ghcr.io/acme/api:1.4.2", "ports": [{"name": "http", "port": 8080}]})
    cases["single-port"] = converge(request(p))

    # 2. public port declared after a private one: the probe and the route take the public one.
    p, _ = new("web", "shop", {"type": "Service", "image": "ghcr.io/acme/web:2.0.0", "replicas": 2, "host": "shop.example.com",
                                "ports": [{"name": "metrics", "port": 9090}, {"name": "http", "port": 8000, "public": True}]})
    cases["public-after-private"] = converge(request(p))

    # 3. no ports: a worker; serving, nothing to dial.
    p, k = new("worker", "jobs", {"type": "Service", "image": "ghcr.io/acme/worker:7", "args": ["--queue", "emails"]})
    d = settled(p)
    dep = d["Deployment/worker"]
    req = request(p, observe_all(p, d, k, dep_status(1, 1, 1, 1)), [pod("worker-6f7d8c9b5-x2k4q", p, dep, "127.0.0.31", n=k)])
    cases["no-ports"] = converge(req)

    # 4. StatefulService with storage, rolling out its first pod.
    p, k = new("db", "data", {"type": "StatefulService", "image": "postgres:17", "replicas": 3,
                               "env": [{"name": "PGDATA", "value": "/var/lib/postgresql/data/pgdata"}],
                               "ports": [{"name": "pg", "port": 5432}],
                               "storage": {"size": "10Gi", "mountPath": "/var/lib/postgresql/data", "storageClassName": "fast"}})
    d = settled(p)
    ss = d["StatefulSet/db"]
    sst = {"observedGeneration": 1, "replicas": 1, "currentReplicas": 1, "updatedReplicas": 1, "currentRevision": "db-7b9c", "updateRevision": "db-7b9c",
           "collisionCount": 0, "availableReplicas": 0}
    req = request(p, observe_all(p, d, k, sst, "StatefulSet"),
                  [pod("db-0", p, ss, "127.0.0.41", phase="Pending", ready=False, n=k)])
    cases["stateful-storage"] = converge(req)

    # 5. explicit readiness and liveness probes win over the synthesized one.
    p, _ = new("search", "shop", {"type": "Service", "image": "ghcr.io/acme/search:3.1", "ports": [{"name": "http", "port": 9200}, {"name": "transport", "port": 9300}],
                                   "resources": {"requests": {"cpu": "0.5", "memory": "1Gi"}, "limits": {"memory": "1Gi"}},
                                   "healthChecks": {"readiness": {"httpGet": {"path": "/_cluster/health", "port": "http"}, "periodSeconds": 5},
                                                    "liveness": {"tcpSocket": {"port": 9300}, "initialDelaySeconds": 60}}})
    cases["explicit-readiness"] = converge(request(p))

    # 6. branded error pages turned off: the route has no errors middleware and none is made.
    p, _ = new("docs", "www", {"type": "Service", "image": "nginx:1.27", "host": "docs.example.com", "errorPages": {"enabled": False},
                                "ports": [{"name": "http", "port": 80, "public": True}]})
    cases["error-pages-disabled"] = converge(request(p))

    # 7. rollout in progress: the Deployment still runs the old template, new pods are being created.
    p, k = new("shopfront", "shop", {"type": "Service", "image": "ghcr.io/acme/shopfront:5.2.0", "replicas": 2, "host": "www.example.com",
                                      "ports": [{"name": "http", "port": 8080, "public": True}]})
    d = settled(p)
    dep = d["Deployment/shopfront"]
    old = copy.deepcopy(dep)
    old["spec"]["template"]["metadata"]["annotations"]["stackdome.io/revision"] = "0a1b2c3d4e"
    old["spec"]["template"]["spec"]["containers"][0]["image"] = "ghcr.io/acme/shopfront:5.1.9"
    d["Deployment/shopfront"] = old
    objs = observe_all(p, d, k, dep_status(2, 0, 2, 2, progressing=("True", "ReplicaSetUpdated", 'ReplicaSet "shopfront-0a1b2c3d4e" is progressing.')))
    pods = [pod("shopfront-0a1b2c3d4e-7hjkl", p, old, "127.0.0.71", n=k), pod("shopfront-0a1b2c3d4e-m9pq2", p, old, "127.0.0.72", n=k + 1),
            pod("shopfront-%s-zx8vw" % dep["spec"]["template"]["metadata"]["annotations"]["stackdome.io/revision"], p, dep, "", phase="Pending", ready=False, n=k + 2)]
    cases["rollout-in-progress"] = converge(request(p, objs, pods))

    # 8. serving: every replica ready; the first sync of a fresh stackdome asks for the ports to be dialed.
    p, k = new("checkout", "shop", {"type": "Service", "image": "ghcr.io/acme/checkout:1.0.3", "replicas": 2, "host": "checkout.example.com",
                                     "ports": [{"name": "http", "port": 8080, "public": True}, {"name": "metrics", "port": 9090}]})
    d = settled(p)
    dep = d["Deployment/checkout"]
    objs = observe_all(p, d, k, dep_status(2, 2, 2, 2))
    pods = [pod("checkout-5d9c7b8f6-abcde", p, dep, "127.0.0.81", n=k), pod("checkout-5d9c7b8f6-fghij", p, dep, "127.0.0.82", n=k + 1)]
    cases["serving"] = converge(request(p, objs, pods))


    # 8a. error pages, the chart not installed yet: no error-page Service to relate, so no Middleware
    # and no route refers to one.
    p, _ = new("cart", "shop", {"type": "Service", "image": "ghcr.io/acme/cart:1.1", "host": "cart.example.com",
                                 "ports": [{"name": "http", "port": 8080, "public": True}]})
    cases["error-pages-not-installed"] = converge(request(p, errsvc=False))

    # 8b. error pages wired and serving, then the chart uninstalled (the related Service is gone):
    # the mirrored EndpointSlice keeps its last address and the route keeps its Middleware.
    p, k = new("orders", "shop", {"type": "Service", "image": "ghcr.io/acme/orders:2.3", "host": "orders.example.com",
                                   "ports": [{"name": "http", "port": 8080, "public": True}]})
    d = settled(p)
    dep = d["Deployment/orders"]
    objs = observe_all(p, d, k, dep_status(1, 1, 1, 1))
    cases["error-pages-uninstalled"] = converge(request(p, objs, [pod("orders-3e2d1c0b9a-qazws", p, dep, "127.0.0.85", n=k)], errsvc=False))

    # 9. crash-looping: OOMKilled, exit 137, in CrashLoopBackOff.
    p, k = new("reports", "finance", {"type": "Service", "image": "ghcr.io/acme/reports:0.9", "ports": [{"name": "http", "port": 8080}],
                                       "resources": {"limits": {"memory": "128Mi"}}})
    d = settled(p)
    dep = d["Deployment/reports"]
    crash = {"name": "app", "image": "ghcr.io/acme/reports:0.9", "imageID": "", "ready": False, "restartCount": 6, "started": False,
             "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 2m40s restarting failed container=app pod=reports-6b7c8d9e0f-qwert_finance"}},
             "lastState": {"terminated": {"exitCode": 137, "reason": "OOMKilled", "startedAt": "2026-11-29T11:50:01Z", "finishedAt": "2026-11-29T11:50:31Z", "containerID": "containerd://4f5e"}}}
    objs = observe_all(p, d, k, dep_status(1, 1, 0, 0, progressing=("True", "ReplicaSetUpdated", "ReplicaSet is progressing.")))
    pods = [pod("reports-6b7c8d9e0f-qwert", p, dep, "127.0.0.91", ready=False, container=crash, n=k)]
    cases["crash-looping"] = converge(request(p, objs, pods))

    # 10. invalid spec (a duplicate port number slipped past admission) with the app running:
    # the children are rebuilt from their last-applied annotation, nothing is deleted or changed.
    good = {"type": "Service", "image": "ghcr.io/acme/billing:2.2", "host": "billing.example.com", "ports": [{"name": "http", "port": 8080, "public": True}]}
    p, k = new("billing", "finance", good)
    d = settled(p)
    dep = d["Deployment/billing"]
    objs = observe_all(p, d, k, dep_status(1, 1, 1, 1))
    pods = [pod("billing-7c8d9e0f1a-asdfg", p, dep, "127.0.0.101", n=k)]
    req = converge(request(p, objs, pods))
    bad = copy.deepcopy(good)
    bad["ports"].append({"name": "admin", "port": 8080})
    req["parent"]["spec"] = bad
    req["parent"]["metadata"]["generation"] = 2
    cases["invalid-spec-running"] = converge(req)

    # 11. a serving private app as a sync hook at version v1 sees it: keys
    # are names (the registration before 0.2.0, still read during a switch).
    p, k = new("ledger", "finance", {"type": "Service", "image": "ghcr.io/acme/ledger:4.0", "ports": [{"name": "grpc", "port": 9000}]})
    d = settled(p, v2=False)
    dep = d["Deployment/ledger"]
    objs = observe_all(p, d, k, dep_status(1, 1, 1, 1))
    cases["v1-keys"] = converge(request(p, objs, [pod("ledger-58f9c6d7b4-lkjhg", p, dep, "127.0.0.111", n=k)], v2=False))

    # 12. observed children full of server-defaulted fields (clusterIP, ipFamilies, strategy, probe timing,
    # volumeMode...) and a spec with non-canonical quantities: the answer carries only what stackdome owns.
    p, k = new("cache", "shop", {"type": "Service", "image": "redis:7.4", "ports": [{"name": "redis", "port": 6379}],
                                  "resources": {"requests": {"cpu": "0.25", "memory": "0.5Gi"}, "limits": {"cpu": "1000m"}}})
    d = settled(p)
    dep = d["Deployment/cache"]
    objs = observe_all(p, d, k, dep_status(1, 1, 1, 1))
    cases["server-defaulted"] = converge(request(p, objs, [pod("cache-7d6c5b4a39-poiuy", p, dep, "127.0.0.121", n=k)]))

    # 13. running but never ready for 20 minutes, nothing verified yet: past the boot grace.
    p, k = new("legacy", "ops", {"type": "Service", "image": "ghcr.io/acme/legacy:11", "ports": [{"name": "http", "port": 8080}]})
    d = settled(p)
    dep = d["Deployment/legacy"]
    objs = observe_all(p, d, k, dep_status(1, 1, 0, 0, progressing=("True", "ReplicaSetUpdated", "ReplicaSet is progressing.")))
    cases["not-ready-past-boot-grace"] = converge(request(p, objs, [pod("legacy-5f4e3d2c1b-zxcvb", p, dep, "127.0.0.131", ready=False, ready_since="2026-11-29T11:00:12Z", n=k)]))

    # 14. scaled to zero: converged, and honest that nothing serves.
    p, k = new("batch", "jobs", {"type": "Service", "image": "ghcr.io/acme/batch:3", "replicas": 0, "ports": [{"name": "http", "port": 8080}]})
    d = settled(p)
    st = dep_status(0, 0, 0, 0)
    for key in ("replicas", "updatedReplicas"):
        st.pop(key, None)
    cases["scaled-to-zero"] = converge(request(p, observe_all(p, d, k, st)))

    # 15. a spec of the wrong shape (ports as a string) with children running: kept as last applied.
    p, k = new("mailer", "ops", {"type": "Service", "image": "ghcr.io/acme/mailer:1", "ports": [{"name": "smtp", "port": 2525}]})
    d = settled(p)
    dep = d["Deployment/mailer"]
    req = converge(request(p, observe_all(p, d, k, dep_status(1, 1, 1, 1)), [pod("mailer-6a5b4c3d2e-mnbvc", p, dep, "127.0.0.151", n=k)]))
    req["parent"]["spec"]["ports"] = "smtp:2525"
    req["parent"]["metadata"]["generation"] = 2
    cases["invalid-spec-wrong-type"] = converge(req)

    # 16. the image cannot be pulled: ImagePullBackOff names the image and the registry's answer.
    p, k = new("invoices", "finance", {"type": "Service", "image": "ghcr.io/acme/invoices:3.0.0-rc1", "ports": [{"name": "http", "port": 8080}]})
    d = settled(p)
    dep = d["Deployment/invoices"]
    pull = {"name": "app", "image": "ghcr.io/acme/invoices:3.0.0-rc1", "imageID": "", "ready": False, "restartCount": 0, "started": False,
            "state": {"waiting": {"reason": "ImagePullBackOff",
                                  "message": 'Back-off pulling image "ghcr.io/acme/invoices:3.0.0-rc1": ErrImagePull: failed to pull and unpack image "ghcr.io/acme/invoices:3.0.0-rc1": not found'}},
            "lastState": {}}
    objs = observe_all(p, d, k, dep_status(1, 1, 0, 0, progressing=("True", "ReplicaSetUpdated", "ReplicaSet is progressing.")))
    cases["image-pull-failed"] = converge(request(p, objs, [pod("invoices-4c3b2a1f0e-rtyui", p, dep, "127.0.0.161", ready=False, container=pull, n=k)]))

    # 17. the container cannot be created: a Secret its env refers to does not exist.
    p, k = new("notifier", "ops", {"type": "Service", "image": "ghcr.io/acme/notifier:2.1", "ports": [{"name": "http", "port": 8080}],
                                    "env": [{"name": "SMTP_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "smtp", "key": "password"}}}]})
    d = settled(p)
    dep = d["Deployment/notifier"]
    cfgerr = {"name": "app", "image": "ghcr.io/acme/notifier:2.1", "imageID": "", "ready": False, "restartCount": 0, "started": False,
              "state": {"waiting": {"reason": "CreateContainerConfigError", "message": 'secret "smtp" not found'}}, "lastState": {}}
    objs = observe_all(p, d, k, dep_status(1, 1, 0, 0, progressing=("True", "ReplicaSetUpdated", "ReplicaSet is progressing.")))
    cases["container-config-error"] = converge(request(p, objs, [pod("notifier-2b1a0f9e8d-ghjkl", p, dep, "127.0.0.171", ready=False, container=cfgerr, n=k)]))

    # 18. the serving app as the previous stackdome version left its status after a verdict: Serving,
    # every port Open, no portCheck. A replica of this version that has no verdict yet keeps it.
    # Private: a public app also gains the ErrorPages condition (new in 0.2.0) at its first sync after
    # the upgrade, stamped then (hooks TestUpgradeAddsTheErrorPagesCondition); this case isolates the
    # verdict carried over, and its answer holds at any time.
    p, k = new("cart", "shop", {"type": "Service", "image": "ghcr.io/acme/cart:3.2", "replicas": 2,
                                 "ports": [{"name": "http", "port": 8080}, {"name": "metrics", "port": 9090}]})
    d = desired_of(request(p))
    dep = d["Deployment/cart"]
    rev = dep["spec"]["template"]["metadata"]["annotations"]["stackdome.io/revision"]
    objs = observe_all(p, d, k, dep_status(2, 2, 2, 2))
    pods = [pod("cart-%s-abcde" % rev, p, dep, "127.0.0.181", n=k), pod("cart-%s-fghij" % rev, p, dep, "127.0.0.182", n=k + 1)]
    msg = "cart serves: ports 8080 (http), 9090 (metrics) open"
    p["status"] = legacy_status(1, rev, None, [("True", "Serving"), ("True", "Serving"), ("False", "Serving"), ("False", "Serving")], msg,
                                ports=[("http", 8080, "Open"), ("metrics", 9090, "Open")])
    cases["serving-verified-before-upgrade"] = request(p, objs, pods)

    # 19. condemned by the previous version (window keyed by the spec revision, no checkedAt):
    # still condemned, nothing dialed; the message of that version stands until something changes.
    p, k = new("search-api", "shop", {"type": "Service", "image": "ghcr.io/acme/search-api:1.1",
                                       "ports": [{"name": "http", "port": 8080}, {"name": "admin", "port": 9091}]})
    d = desired_of(request(p))
    dep = d["Deployment/search-api"]
    rev = dep["spec"]["template"]["metadata"]["annotations"]["stackdome.io/revision"]
    objs = observe_all(p, d, k, dep_status(1, 1, 1, 1))
    podname = "search-api-%s-qazws" % rev
    detail = "port 9091 (admin) refused connection on pod %s: nothing listens there" % podname
    msg = detail + " since 2026-11-29T11:40:00Z (past the 3m0s grace); roll out a fix to check again"
    p["status"] = legacy_status(1, rev, None, [("False", "PortNotListening"), ("False", "PortNotListening"), ("True", "PortNotListening"), ("False", "PortNotListening")], msg,
                                ports=[("http", 8080, "Open"), ("admin", 9091, "Closed")],
                                portcheck={"revision": rev, "failingSince": EARLIER},
                                details=[{"type": "readiness_failure", "reason": "PortNotListening", "message": detail, "container": "app", "port": 9091,
                                          "revision": rev, "observedAt": "2026-11-29T11:43:10Z"}])
    cases["condemned-before-upgrade"] = request(p, objs, [pod(podname, p, dep, "127.0.0.191", n=k)])

    # 20. a pod that cannot be scheduled for 20 minutes: the scheduler's message; stalled past the boot grace.
    p, k = new("renderer", "media", {"type": "Service", "image": "ghcr.io/acme/renderer:2.0", "ports": [{"name": "http", "port": 8080}],
                                      "resources": {"requests": {"cpu": "16", "memory": "64Gi"}}})
    d = desired_of(request(p))
    dep = d["Deployment/renderer"]
    pend = pod("renderer-8b7c6d5f4g-lmnop", p, dep, "", phase="Pending", ready=False, n=k)
    pend["status"]["conditions"] = [{"lastProbeTime": None, "lastTransitionTime": EARLIER, "status": "False", "type": "PodScheduled", "reason": "Unschedulable",
                                     "message": "0/3 nodes are available: 3 Insufficient cpu, 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."}]
    del pend["status"]["containerStatuses"]
    objs = observe_all(p, d, k, dep_status(1, 1, 0, 0, progressing=("True", "ReplicaSetUpdated", "ReplicaSet is progressing.")))
    cases["unschedulable"] = converge(request(p, objs, [pend]))

    # 21. the ReplicaSet cannot create pods: the namespace's quota refuses them.
    p, k = new("exporter", "ops", {"type": "Service", "image": "ghcr.io/acme/exporter:1.2", "ports": [{"name": "metrics", "port": 9100}],
                                    "resources": {"limits": {"cpu": "1", "memory": "256Mi"}}})
    d = desired_of(request(p))
    st = dep_status(1, 0, 0, 0, progressing=("True", "ReplicaSetUpdated", "ReplicaSet is progressing."))
    st.pop("replicas", None)
    st["conditions"].append({"lastTransitionTime": "2026-11-29T11:59:00Z", "lastUpdateTime": "2026-11-29T11:59:00Z", "reason": "FailedCreate", "status": "True", "type": "ReplicaFailure",
                             "message": 'pods "exporter-6c5d4b3a2f-" is forbidden: exceeded quota: compute, requested: limits.memory=256Mi, used: limits.memory=1792Mi, limited: limits.memory=2Gi'})
    cases["create-failed"] = converge(request(p, observe_all(p, d, k, st)))

    # 22. a StatefulSet rollout blocked under OrderedReady: pod 0 is not Ready on the old revision.
    spec = {"type": "StatefulService", "image": "ghcr.io/acme/zk:3.9.3", "replicas": 3, "ports": [{"name": "client", "port": 2181}]}
    p, k = new("zk", "data", spec)
    d = desired_of(request(p))
    ss = d["StatefulSet/zk"]
    old = copy.deepcopy(ss)
    old["spec"]["template"]["metadata"]["annotations"]["stackdome.io/revision"] = "1f2e3d4c5b"
    old["spec"]["template"]["spec"]["containers"][0]["image"] = "ghcr.io/acme/zk:3.9.2"
    sst = {"observedGeneration": 2, "replicas": 3, "readyReplicas": 2, "currentReplicas": 2, "updatedReplicas": 1, "availableReplicas": 2,
           "currentRevision": "zk-7c8d9f6b5", "updateRevision": "zk-5f6b7c8d9", "collisionCount": 0}
    objs = observe_all(p, d, k, sst, "StatefulSet")
    for o in objs:
        if o["kind"] == "StatefulSet":
            o["metadata"]["generation"] = 2
    def sts_pod(name, wl, ip, rev_hash, ready, nn):
        o = pod(name, p, wl, ip, ready=ready, n=nn)
        o["metadata"]["labels"].pop("pod-template-hash")
        o["metadata"]["labels"].update({"controller-revision-hash": rev_hash, "statefulset.kubernetes.io/pod-name": name})
        o["metadata"]["ownerReferences"][0].update({"kind": "StatefulSet", "name": "zk"})
        return o
    pods = [sts_pod("zk-0", old, "127.0.0.221", "zk-7c8d9f6b5", False, k), sts_pod("zk-1", old, "127.0.0.222", "zk-7c8d9f6b5", True, k + 1),
            sts_pod("zk-2", ss, "127.0.0.223", "zk-5f6b7c8d9", True, k + 2)]
    pods[0]["status"]["containerStatuses"][0].update({"ready": False, "restartCount": 0})
    cases["rollout-blocked"] = converge(request(p, objs, pods))

    # 23. spec.storage.size edited on an object admitted before the CEL rule, on a verified app: the
    # StatefulSet keeps its claim template, every other change still applies, status names the change
    # not applied.
    spec = {"type": "StatefulService", "image": "mysql:8.4", "ports": [{"name": "mysql", "port": 3306}],
            "storage": {"size": "20Gi", "mountPath": "/var/lib/mysql", "storageClassName": "ssd"}}
    p, k = new("orders-db", "shop", spec)
    d = desired_of(request(p))
    ss = d["StatefulSet/orders-db"]
    sst = {"observedGeneration": 1, "replicas": 1, "readyReplicas": 1, "currentReplicas": 1, "updatedReplicas": 1, "availableReplicas": 1,
           "currentRevision": "orders-db-6d7c8b9f5", "updateRevision": "orders-db-6d7c8b9f5", "collisionCount": 0}
    objs = observe_all(p, d, k, sst, "StatefulSet")
    o = sts = [x for x in objs if x["kind"] == "StatefulSet"][0]
    p2 = copy.deepcopy(p)
    p2["spec"]["storage"]["size"] = "50Gi"
    p2["metadata"]["generation"] = 2
    zpod = pod("orders-db-0", p, ss, "127.0.0.231", n=k)
    zpod["metadata"]["labels"].pop("pod-template-hash")
    zpod["metadata"]["labels"]["controller-revision-hash"] = "orders-db-6d7c8b9f5"
    p2["status"] = legacy_status(1, d["StatefulSet/orders-db"]["spec"]["template"]["metadata"]["annotations"]["stackdome.io/revision"], None,
                                 [("True", "Serving"), ("True", "Serving"), ("False", "Serving"), ("False", "Serving")], "orders-db serves: port 3306 (mysql) open",
                                 ports=[("mysql", 3306, "Open")], portcheck={"revision": "orders-db-6d7c8b9f5", "checkedAt": "2026-11-29T11:41:02.250000Z"})
    cases["storage-not-applied"] = converge(request(p2, objs, [zpod]))

    # 24. a private image with its own identity: imagePullSecrets, serviceAccountName.
    p, _ = new("billing-worker", "finance", {"type": "Service", "image": "registry.acme.internal/finance/billing-worker:7.1",
                                              "imagePullSecrets": [{"name": "acme-registry"}], "serviceAccountName": "billing-worker"})
    cases["private-image"] = converge(request(p))

    # 25. security relaxed field by field: a fixed uid and group, NET_BIND_SERVICE for port 80; the rest stays restricted.
    p, _ = new("edge", "www", {"type": "Service", "image": "ghcr.io/acme/edge:1.0", "ports": [{"name": "http", "port": 80}],
                                "podSecurityContext": {"runAsUser": 10001, "runAsGroup": 10001, "fsGroup": 10001},
                                "securityContext": {"capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}, "readOnlyRootFilesystem": True}})
    cases["security-relaxed"] = converge(request(p))

    # 26. configuration: every key of a ConfigMap and a Secret in the environment, and files mounted read-only.
    p, _ = new("notes", "apps", {"type": "Service", "image": "ghcr.io/acme/notes:2.4", "ports": [{"name": "http", "port": 8080}],
                                  "envFrom": [{"configMapRef": {"name": "notes-config"}}, {"secretRef": {"name": "notes-secrets"}, "prefix": "SECRET_"}],
                                  "files": [{"name": "config", "mountPath": "/etc/notes", "configMap": {"name": "notes-files"}},
                                            {"name": "tls", "mountPath": "/etc/notes/tls", "secret": {"secretName": "notes-tls", "items": [{"key": "tls.crt", "path": "cert.pem"}]}}]})
    team_config("ConfigMap", "apps", "notes-config", {"NOTES_PAGE_SIZE": "50", "NOTES_THEME": "dark"}, 1)
    team_config("Secret", "apps", "notes-secrets", {"API_TOKEN": "bm90LWEtcmVhbC10b2tlbg=="}, 2)
    team_config("ConfigMap", "apps", "notes-files", {"notes.yaml": "listen: :8080\nstorage: /data\n"}, 3)
    team_config("Secret", "apps", "notes-tls", {"tls.crt": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==", "tls.key": "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCg=="}, 4)
    cases["config-files"] = converge(request(p))

    # 27. placement: a node pool, its taint, zone spread, anti-affinity, and pod annotations and labels.
    p, _ = new("search-index", "shop", {"type": "Service", "image": "ghcr.io/acme/search-index:5.0", "replicas": 3, "ports": [{"name": "http", "port": 9200}],
                                         "nodeSelector": {"acme.io/pool": "memory"},
                                         "tolerations": [{"key": "acme.io/dedicated", "operator": "Equal", "value": "search", "effect": "NoSchedule"}],
                                         "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "ScheduleAnyway"}],
                                         "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {
                                             "topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app.kubernetes.io/instance": "search-index"}}}}]}},
                                         "podAnnotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9200"},
                                         "podLabels": {"team": "search", "tier": "backend"}})
    cases["placement"] = converge(request(p))

    # 28. autoscaling: the HorizontalPodAutoscaler scaled the Deployment to 3; the answer carries no replicas and
    # the gate judges the live count: 3 of 3 ready is Available.
    spec = {"type": "Service", "image": "ghcr.io/acme/catalog:9.2", "ports": [{"name": "http", "port": 8080}],
            "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}}, "autoscaling": {"minReplicas": 2, "maxReplicas": 10, "targetCPUUtilizationPercentage": 70}}
    p, k = new("catalog", "shop", spec)
    d = desired_of(request(p))
    dep = d["Deployment/catalog"]
    objs = observe_all(p, d, k, dep_status(3, 3, 3, 3))
    for o in objs:
        if o["kind"] == "Deployment":
            o["spec"]["replicas"] = 3
        if o["kind"] == "HorizontalPodAutoscaler":
            o["status"] = {"currentReplicas": 3, "desiredReplicas": 3, "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 74, "averageValue": "185m"}}}]}
    pods = [pod("catalog-%s-%s" % (template_hash(dep["spec"]["template"]["metadata"]["annotations"]["stackdome.io/revision"]), sfx), p, dep, "127.0.0.%d" % (241 + i), n=k + i)
            for i, sfx in enumerate(["aaaaa", "bbbbb", "ccccc"])]
    cases["autoscaling"] = converge(request(p, objs, pods))

    # 29. TLS from a certificate resolver: the route says certResolver, and plain HTTP to the host
    # redirects to HTTPS (the redirect route once its redirectScheme Middleware exists).
    p, _ = new("storefront", "shop", {"type": "Service", "image": "ghcr.io/acme/storefront:3.0", "host": "store.example.com",
                                       "ports": [{"name": "http", "port": 8080, "public": True}], "tls": {"certResolver": "letsencrypt"}})
    cases["tls-cert-resolver"] = converge(request(p, observe_all(p, settled(p), 0, None)))

    # 30. TLS from a Secret, and three public ports: the primary at /, the api at its own /v1 as the app
    # serves it, the websocket port at /ws stripped before it reaches the app.
    p, _ = new("chat", "apps", {"type": "Service", "image": "ghcr.io/acme/chat:1.9", "host": "chat.example.com", "tls": {"secretName": "chat-example-com-tls"},
                                 "ports": [{"name": "http", "port": 8080, "public": True}, {"name": "api", "port": 8081, "public": True, "path": "/v1"},
                                           {"name": "ws", "port": 8082, "public": True}, {"name": "metrics", "port": 9090}]})
    cases["tls-extra-public-ports"] = converge(request(p, observe_all(p, settled(p), 0, None)))

    # 31. a production app: every field group together, serving at the autoscaler's 3 replicas.
    spec = {"type": "Service", "image": "registry.acme.internal/payments/api:4.12.1", "args": ["--config", "/etc/payments/config.yaml"],
            "imagePullSecrets": [{"name": "acme-registry"}], "serviceAccountName": "payments-api",
            "env": [{"name": "LOG_FORMAT", "value": "json"}],
            "envFrom": [{"configMapRef": {"name": "payments-settings"}}, {"secretRef": {"name": "payments-db"}},
                        {"configMapRef": {"name": "payments-flags"}, "prefix": "FLAG_", "rollOnChange": False}],
            "files": [{"name": "config", "mountPath": "/etc/payments", "configMap": {"name": "payments-config"}},
                      {"name": "signing-key", "mountPath": "/etc/payments/keys", "secret": {"secretName": "payments-signing-key", "defaultMode": 256}}],
            "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}, "limits": {"memory": "1Gi"}},
            "autoscaling": {"minReplicas": 3, "maxReplicas": 12, "targetCPUUtilizationPercentage": 65},
            "host": "pay.example.com", "hosts": ["payments.example.com"], "tls": {"certResolver": "letsencrypt"},
            "middlewares": [{"name": "payments-sso"}, {"name": "payments-rate-limit"}],
            "ports": [{"name": "http", "port": 8080, "public": True}, {"name": "webhooks", "port": 8081, "public": True, "path": "/hooks"},
                      {"name": "admin", "port": 9000, "public": True}, {"name": "metrics", "port": 9090}],
            "healthChecks": {"readiness": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 5}},
            "securityContext": {"readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
            "scratch": [{"name": "tmp", "mountPath": "/tmp", "sizeLimit": "256Mi"}],
            "migration": {"args": ["migrate", "--config", "/etc/payments/config.yaml"]},
            "drainSeconds": 10, "terminationGracePeriodSeconds": 45,
            "podSecurityContext": {"runAsUser": 10001, "fsGroup": 10001},
            "nodeSelector": {"acme.io/pool": "general"},
            "tolerations": [{"key": "acme.io/spot", "operator": "Exists", "effect": "NoSchedule"}],
            "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64", "arm64"]}]}]}}},
            "podAnnotations": {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
            "podLabels": {"team": "payments", "cost-center": "cc-4711"}}
    p, k = new("payments-api", "payments", spec)
    team_config("ConfigMap", "payments", "payments-settings", {"CURRENCY": "EUR", "FEATURE_REFUNDS": "true"}, 5)
    team_config("Secret", "payments", "payments-db", {"DATABASE_URL": "cG9zdGdyZXM6Ly9wYXltZW50czpub3QtYS1yZWFsLXBhc3N3b3JkQGRiL3BheW1lbnRz"}, 6)
    team_config("ConfigMap", "payments", "payments-config", {"config.yaml": "listen: :8080\nwebhooks: :8081\n"}, 7)
    team_config("Secret", "payments", "payments-signing-key", {"key.pem": "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCg=="}, 8)
    team_config("ConfigMap", "payments", "payments-flags", {"REFUNDS_V2": "off", "SEPA_INSTANT": "on"}, 14)
    team_middleware("payments", "payments-sso", {"forwardAuth": {"address": "http://sso.auth.svc:4180/oauth2/auth", "trustForwardHeader": True,
                                                                 "authResponseHeaders": ["X-Auth-Request-User", "X-Auth-Request-Email"]}}, 2)
    team_middleware("payments", "payments-rate-limit", {"rateLimit": {"average": 100, "burst": 200}}, 3)
    d = settled(p)
    dep = d["Deployment/payments-api"]
    objs = observe_all(p, d, k, dep_status(3, 3, 3, 3))
    for o in objs:
        if o["kind"] == "Deployment":
            o["spec"]["replicas"] = 3
    h = template_hash(dep["spec"]["template"]["metadata"]["annotations"]["stackdome.io/revision"])
    pods = [pod("payments-api-%s-%s" % (h, sfx), p, dep, "127.0.0.%d" % (201 + i), n=k + i) for i, sfx in enumerate(["q2w3e", "r4t5y", "u6i7o"])]
    cases["production-app"] = converge(request(p, objs, pods))

    # 32. a field of a real app slipped past admission wrong (replicas and autoscaling together, on an
    # object of a CRD without the rule): InvalidSpec, the running children kept as last applied.
    good = {"type": "Service", "image": "ghcr.io/acme/search-api:2.0", "replicas": 2, "ports": [{"name": "http", "port": 8080}],
            "resources": {"requests": {"cpu": "200m"}}}
    p, k = new("search-api", "apps", good)
    d = settled(p)
    dep = d["Deployment/search-api"]
    req = converge(request(p, observe_all(p, d, k, dep_status(2, 2, 2, 2)),
                           [pod("search-api-%s-%s" % (template_hash(dep["spec"]["template"]["metadata"]["annotations"]["stackdome.io/revision"]), sfx), p, dep, "127.0.0.%d" % (211 + i), n=k + i)
                            for i, sfx in enumerate(["plmok", "ijnuh"])]))
    req["parent"]["spec"]["autoscaling"] = {"minReplicas": 2, "maxReplicas": 8}
    req["parent"]["metadata"]["generation"] = 2
    cases["invalid-spec-new-field"] = converge(req)

    # 26 (last, so that no other case's uids move). The chart moving its sync
    # hook between versions v1 and v2 (reference/metacontroller.md section 17):
    # the same cluster state as Metacontroller v4.17.2 sends it to a hook at
    # each version. Pods are still starting (no IP): nothing is dialed, so each
    # pair's answers do not depend on a verifier shared between them.
    def switch_pair(name, image, before_v2, before_case, after_case, n_pod):
        p, k = new(name, "shop", {"type": "Service", "image": image, "replicas": 2, "host": name + ".example.com",
                                   "ports": [{"name": "http", "port": 8080, "public": True}]})
        d = settled(p, v2=before_v2)
        dep = d["Deployment/" + name]
        objs = observe_all(p, d, k, dep_status(2, 2, 0, 0, progressing=("True", "ReplicaSetUpdated", "ReplicaSet is progressing.")))
        rev = dep["spec"]["template"]["metadata"]["annotations"]["stackdome.io/revision"]
        pods = [pod("%s-%s-%s" % (name, template_hash(rev), sfx), p, dep, "", phase="Pending", ready=False, n=n_pod + i)
                for i, sfx in enumerate(("qwert", "yuiop"))]
        cases[before_case] = converge(request(p, copy.deepcopy(objs), copy.deepcopy(pods), v2=before_v2))
        cases[after_case] = converge(request(copy.deepcopy(cases[before_case]["parent"]), copy.deepcopy(objs), copy.deepcopy(pods), v2=not before_v2))

    # The upgrade: an app that only ever ran under the registration before
    # 0.2.0 (sync at v1) has no wiring and its status says why; at the first
    # sync at v2 the wiring is added and nothing else changes.
    switch_pair("basket", "ghcr.io/acme/basket:2.3.0", False, "sync-hook-v1-unwired", "sync-hook-v2-switched", k)
    # A rollback of the chart: a wired app seen by a sync hook at v1 again.
    # The error-page Service is filtered out, every child is kept, status
    # says what it cannot see.
    switch_pair("wishlist", "ghcr.io/acme/wishlist:1.8.2", True, "sync-hook-v2-wired", "sync-hook-v1-rolled-back", k + 10)

    # 33. (after 26, so that no other case's uids move) scaled in from 2 replicas to 1: the
    # PodDisruptionBudget the 2 pods had is observed and no longer returned, so Metacontroller
    # deletes it (a budget over one pod protects nothing).
    p, k = new("ledger", "payments", {"type": "Service", "image": "ghcr.io/acme/ledger:3.3", "replicas": 2,
                                      "ports": [{"name": "http", "port": 8080}]})
    d = settled(p)
    dep = d["Deployment/ledger"]
    h = template_hash(dep["spec"]["template"]["metadata"]["annotations"]["stackdome.io/revision"])
    req = converge(request(p, observe_all(p, d, k, dep_status(2, 2, 2, 2)),
                           [pod("ledger-%s-%s" % (h, sfx), p, dep, "127.0.0.%d" % (221 + i), n=k + i) for i, sfx in enumerate(["a1b2c", "d3e4f"])]))
    req["parent"]["spec"]["replicas"] = 1
    req["parent"]["metadata"]["generation"] = 2
    cases["disruption-budget-scaled-in"] = converge(req)

    # 34. a database with a memory-backed /dev/shm and a writable /tmp under a read-only root
    # filesystem: emptyDir volumes with their size limits, mounted read-write.
    p, _ = new("reports-db", "data", {"type": "StatefulService", "image": "postgres:17", "replicas": 1,
                                      "ports": [{"name": "pg", "port": 5432}],
                                      "storage": {"size": "20Gi", "mountPath": "/var/lib/postgresql/data"},
                                      "securityContext": {"readOnlyRootFilesystem": True},
                                      "scratch": [{"name": "tmp", "mountPath": "/tmp", "sizeLimit": "1Gi"},
                                                  {"name": "run", "mountPath": "/var/run/postgresql", "sizeLimit": "16Mi"}],
                                      "shm": {"sizeLimit": "512Mi"}})
    cases["scratch-and-shm"] = converge(request(p))

    # 35. the migration fails: its init container exits 3 and crash-loops, the app container
    # waits behind it (PodInitializing). Status names the init container like a crash.
    team_config("Secret", "billing", "invoices-db", {"DATABASE_URL": "cG9zdGdyZXM6Ly9pbnZvaWNlc0BkYi9pbnZvaWNlcw=="}, 9)
    p, k = new("invoices", "billing", {"type": "Service", "image": "ghcr.io/acme/invoices:2.8.0",
                                       "ports": [{"name": "http", "port": 8080}],
                                       "envFrom": [{"secretRef": {"name": "invoices-db"}}],
                                       "migration": {"command": ["/app/invoices"], "args": ["migrate", "up"]}})
    d = settled(p)
    dep = d["Deployment/invoices"]
    h = template_hash(dep["spec"]["template"]["metadata"]["annotations"]["stackdome.io/revision"])
    mp = pod("invoices-%s-k8s7d" % h, p, dep, "127.0.0.231", n=k)
    mp["status"].update({"phase": "Pending", "conditions": [
        {"lastProbeTime": None, "lastTransitionTime": "2026-11-29T11:00:11Z", "status": "True", "type": "PodReadyToStartContainers"},
        {"lastProbeTime": None, "lastTransitionTime": "2026-11-29T11:00:11Z", "message": "containers with incomplete status: [migrate]",
         "reason": "ContainersNotInitialized", "status": "False", "type": "Initialized"},
        {"lastProbeTime": None, "lastTransitionTime": "2026-11-29T11:00:11Z", "message": "containers with unready status: [app]",
         "reason": "ContainersNotReady", "status": "False", "type": "Ready"},
        {"lastProbeTime": None, "lastTransitionTime": "2026-11-29T11:00:11Z", "message": "containers with unready status: [app]",
         "reason": "ContainersNotReady", "status": "False", "type": "ContainersReady"},
        {"lastProbeTime": None, "lastTransitionTime": "2026-11-29T11:00:11Z", "status": "True", "type": "PodScheduled"}],
        "initContainerStatuses": [{"name": "migrate", "image": dep["spec"]["template"]["spec"]["containers"][0]["image"], "imageID": "", "ready": False,
                                   "restartCount": 5, "started": False,
                                   "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 2m40s restarting failed container=migrate pod=invoices-%s-k8s7d_billing" % h}},
                                   "lastState": {"terminated": {"exitCode": 3, "reason": "Error", "startedAt": "2026-11-29T11:57:02Z", "finishedAt": "2026-11-29T11:57:04Z",
                                                                "containerID": "containerd://4be1d0c2"}}}],
        "containerStatuses": [{"name": "app", "image": dep["spec"]["template"]["spec"]["containers"][0]["image"], "imageID": "", "lastState": {},
                               "ready": False, "restartCount": 0, "started": False, "state": {"waiting": {"reason": "PodInitializing"}}}]})
    cases["migration-failing"] = converge(request(p, observe_all(p, d, k, dep_status(1, 1, 0, 0, progressing=("True", "ReplicaSetUpdated", "ReplicaSet is progressing."))), [mp]))

    # 36. a drain longer than the grace period slipped past admission (a CRD without the rule):
    # InvalidSpec, the running children kept as last applied, so no pod is killed mid-drain.
    good = {"type": "Service", "image": "ghcr.io/acme/quotes:1.2", "replicas": 1, "ports": [{"name": "http", "port": 8080}]}
    p, k = new("quotes", "apps", good)
    d = settled(p)
    dep = d["Deployment/quotes"]
    req = converge(request(p, observe_all(p, d, k, dep_status(1, 1, 1, 1)),
                           [pod("quotes-%s-zq9xr" % template_hash(dep["spec"]["template"]["metadata"]["annotations"]["stackdome.io/revision"]), p, dep, "127.0.0.235", n=k)]))
    req["parent"]["spec"]["drainSeconds"] = 40
    req["parent"]["metadata"]["generation"] = 2
    cases["invalid-spec-drain"] = converge(req)

    # 37 (after the cases above, so that no other case's uids move). More than
    # one host, no tls: every route answers for each host, on websecure and on
    # the plain-HTTP entry point web, so http://<host>/ reaches the app
    # instead of the catch-all's 404.
    p, _ = new("docs-site", "web", {"type": "Service", "image": "ghcr.io/acme/docs:5.1", "host": "docs.example.com",
                                     "hosts": ["www.docs.example.com", "docs.example.org"],
                                     "ports": [{"name": "http", "port": 8080, "public": True}, {"name": "search", "port": 8081, "public": True, "path": "/search"}]})
    cases["hosts-without-tls"] = converge(request(p, observe_all(p, settled(p), 0, None)))

    # 38. The team's own Middlewares: auth exists and is attached before the
    # errors Middleware on every route; rate-limit does not exist yet, is never
    # referred to (Traefik would disable the route), and status names it.
    p, _ = new("ledger", "finance", {"type": "Service", "image": "ghcr.io/acme/ledger:2.4", "host": "ledger.example.com",
                                      "middlewares": [{"name": "sso-auth"}, {"name": "rate-limit"}],
                                      "ports": [{"name": "http", "port": 8080, "public": True}, {"name": "admin", "port": 8081, "public": True}]})
    team_middleware("finance", "sso-auth", {"forwardAuth": {"address": "http://sso.auth.svc:4180/oauth2/auth", "trustForwardHeader": True}}, 1)
    cases["team-middlewares"] = converge(request(p, observe_all(p, settled(p), 0, None)))

    # 39. Config follows: the pods' template carries the digest of the
    # ConfigMap and Secret the app uses, so a change of their content rolls
    # the pods; the feature flags are read through envFrom with
    # rollOnChange false (a flag flip must not restart every pod); an
    # optional ConfigMap that does not exist is no error. Config=Found.
    team_config("ConfigMap", "shop", "cart-config", {"cart.yaml": "ttl: 30m\n"}, 10, binary={"logo.png": "iVBORw0KGgo="})
    team_config("ConfigMap", "shop", "cart-flags", {"FLAG_EXPRESS": "on"}, 11)
    team_config("Secret", "shop", "cart-db", {"password": "bm90LWEtcmVhbC1wYXNzd29yZA=="}, 12)
    p, k = new("cart", "shop", {"type": "Service", "image": "ghcr.io/acme/cart:3.0", "ports": [{"name": "http", "port": 8080}],
                                "env": [{"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": "cart-db", "key": "password"}}},
                                        {"name": "REGION", "valueFrom": {"configMapKeyRef": {"name": "cart-region", "key": "region", "optional": True}}}],
                                "envFrom": [{"configMapRef": {"name": "cart-flags"}, "rollOnChange": False}],
                                "files": [{"name": "config", "mountPath": "/etc/cart", "configMap": {"name": "cart-config"}}]})
    d = settled(p)
    dep = d["Deployment/cart"]
    h = template_hash(dep["spec"]["template"]["metadata"]["annotations"]["stackdome.io/revision"])
    cases["config-follows"] = converge(request(p, observe_all(p, d, k, dep_status(1, 1, 1, 1)),
                                               [pod("cart-%s-x1y2z" % h, p, dep, "127.0.0.241", n=k)]))

    # 40. A ConfigMap the app needs does not exist: status names it
    # (Config=False ConfigNotFound) instead of a silent Progressing; the pods
    # wait for it (the kubelet does not start them), the Secret exists.
    team_config("Secret", "shop", "search-key", {"key": "bm90LWEta2V5"}, 13)
    p, _ = new("search", "shop", {"type": "Service", "image": "ghcr.io/acme/search:1.0", "ports": [{"name": "http", "port": 8080}],
                                  "envFrom": [{"configMapRef": {"name": "search-settings"}}, {"secretRef": {"name": "search-key"}}]})
    cases["config-missing"] = converge(request(p))

    # 41. A brand: the app picks the platform's brand acme-pay, and its errors
    # Middleware asks the page server for it in the page's query
    # (/_errors/{status}?brand=acme-pay); the routes are as without one.
    p, _ = new("pay", "payments", {"type": "Service", "image": "ghcr.io/acme/pay:4.2", "host": "pay.example.com",
                                   "ports": [{"name": "http", "port": 8080, "public": True}],
                                   "errorPages": {"enabled": True, "brand": "acme-pay"}})  # enabled as the API server defaults it
    cases["error-pages-brand"] = converge(request(p, observe_all(p, settled(p), 0, None)))

    # 42. A NetworkPolicy the app asked for: Traefik's namespace to the public
    # port, stackdome's pods to every declared port (the port gate's dials),
    # the app's own namespace to every declared port, nothing else.
    p, _ = new("orders", "shop", {"type": "Service", "image": "ghcr.io/acme/orders:3.1", "host": "orders.example.com",
                                  "ports": [{"name": "http", "port": 8080, "public": True}, {"name": "grpc", "port": 9000}],
                                  "networkPolicy": {"enabled": True}})
    cases["network-policy"] = converge(request(p, observe_all(p, settled(p), 0, None)))

    # 43. The app names its metrics port: a default install has no
    # PodMonitors (--pod-monitors=false), so nothing more is made; with
    # them on the same request gets a PodMonitor (chart/podmonitor_test.go).
    p, _ = new("catalog", "shop", {"type": "Service", "image": "ghcr.io/acme/catalog:2.0", "host": "catalog.example.com",
                                   "ports": [{"name": "http", "port": 8080, "public": True}, {"name": "metrics", "port": 9090}],
                                   "metrics": {"port": "metrics", "path": "/metrics"}})
    cases["metrics-port"] = converge(request(p, observe_all(p, settled(p), 0, None)))

    batch_cases(cases, new)

    for case, req in cases.items():
        write(case, req)
    print("wrote %d cases to %s" % (len(cases), OUT))


def batch_cases(cases, new):
    """Sidecars, type Job and type CronJob (after every other case, so that no
    other case's uids move)."""
    # 41. Sidecars: oauth2-proxy in front of the app holds the public port
    # (spec.ports[].container), cloud-sql-proxy serves the database locally and
    # starts before the migration; both are native sidecars. Serving.
    team_config("Secret", "shop", "oauth2-proxy", {"cookie-secret": "bm90LWEtc2VjcmV0"}, 14)
    p, k = new("orders", "shop", {"type": "Service", "image": "ghcr.io/acme/orders:4.0", "host": "orders.example.com",
                                  "ports": [{"name": "http", "port": 8080}, {"name": "proxy", "port": 4180, "public": True, "container": "oauth2-proxy"}],
                                  "migration": {"command": ["/app/orders"], "args": ["migrate"]},
                                  "files": [{"name": "sql", "mountPath": "/etc/sql", "secret": {"secretName": "orders-sql"}}],
                                  "sidecars": [
                                      {"name": "cloud-sql-proxy", "image": "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.14.1",
                                       "args": ["--port=5432", "acme:europe-west1:orders"], "files": ["sql"],
                                       "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}},
                                      {"name": "oauth2-proxy", "image": "quay.io/oauth2-proxy/oauth2-proxy:v7.7.1",
                                       "args": ["--http-address=0.0.0.0:4180", "--upstream=http://127.0.0.1:8080"],
                                       "envFrom": [{"secretRef": {"name": "oauth2-proxy"}}],
                                       "healthChecks": {"readiness": {"httpGet": {"path": "/ping", "port": 4180}}}}]})
    team_config("Secret", "shop", "orders-sql", {"credentials.json": "e30="}, 15)
    d = settled(p)
    dep = d["Deployment/orders"]
    h = template_hash(dep["spec"]["template"]["metadata"]["annotations"]["stackdome.io/revision"])
    cases["sidecars"] = converge(request(p, observe_all(p, d, k, dep_status(1, 1, 1, 1)), [pod("orders-%s-s1d3c" % h, p, dep, "127.0.0.245", n=k)]))

    # 42. A sidecar crash-loops (its exit 1, restarted by the kubelet: restartPolicy
    # Always) while the app runs: CrashLooping names the sidecar.
    p, k = new("vault-app", "secure", {"type": "Service", "image": "ghcr.io/acme/vault-app:1.0", "ports": [{"name": "http", "port": 8080}],
                                       "sidecars": [{"name": "vault-agent", "image": "hashicorp/vault:1.18", "args": ["agent", "-config=/etc/vault/agent.hcl"]}]})
    d = settled(p)
    dep = d["Deployment/vault-app"]
    h = template_hash(dep["spec"]["template"]["metadata"]["annotations"]["stackdome.io/revision"])
    sp = pod("vault-app-%s-v4ult" % h, p, dep, "127.0.0.246", ready=False, n=k)
    sp["status"]["initContainerStatuses"] = [{"name": "vault-agent", "image": "hashicorp/vault:1.18", "imageID": "", "ready": False, "restartCount": 4,
                                              "started": False, "state": {"waiting": {"reason": "CrashLoopBackOff",
                                                                                       "message": "back-off 1m20s restarting failed container=vault-agent pod=vault-app-%s-v4ult_secure" % h}},
                                              "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": "2026-11-29T11:58:01Z",
                                                                           "finishedAt": "2026-11-29T11:58:02Z", "containerID": "containerd://7a11"}}}]
    cases["sidecar-crash-looping"] = converge(request(p, observe_all(p, d, k, dep_status(1, 1, 0, 0, progressing=("True", "ReplicaSetUpdated", "ReplicaSet is progressing."))), [sp]))

    # 43. type Job, first sync: the Job <name>-<revision> is created.
    backfill = {"type": "Job", "image": "ghcr.io/acme/backfill:2.1", "args": ["--since", "2026-01-01"],
                "job": {"backoffLimit": 2, "activeDeadlineSeconds": 3600}, "envFrom": [{"secretRef": {"name": "warehouse-db"}}]}
    team_config("Secret", "data", "warehouse-db", {"url": "cG9zdGdyZXM6Ly8="}, 16)
    p, _ = new("backfill", "data", copy.deepcopy(backfill))
    cases["job-created"] = converge(request(p))

    # 44. type Job, complete: the Job is kept as it is (returned unchanged), never rerun.
    p, k = new("backfill", "data", copy.deepcopy(backfill))
    d = desired_of(request(p))
    (jk, j), = [(k2, v) for k2, v in d.items() if k2.startswith("Job/")]
    jo = observe_all(p, d, k, job_status("Complete"), workload_kind="Job")
    jobj = [o for o in jo if o["kind"] == "Job"][0]
    cases["job-complete"] = converge(request(p, jo, [job_pod(jobj["metadata"]["name"] + "-x7k2p", p, jobj, k, exit_code=0)]))

    # 45. type Job, failed: backoffLimit reached; status names the Job, the reason and the
    # pod's exit code; Stalled until the spec changes.
    p, k = new("backfill", "data", copy.deepcopy(backfill))
    d = desired_of(request(p))
    jo = observe_all(p, d, k, job_status("Failed", failed=3), workload_kind="Job")
    jobj = [o for o in jo if o["kind"] == "Job"][0]
    jn = jobj["metadata"]["name"]
    pods = [job_pod(jn + "-a1b2c", p, jobj, k, exit_code=3), job_pod(jn + "-d3e4f", p, jobj, k + 1, exit_code=3),
            job_pod(jn + "-g5h6i", p, jobj, k + 2, exit_code=3)]
    pods[2]["metadata"]["creationTimestamp"] = "2026-11-29T11:30:40Z"
    cases["job-failed"] = converge(request(p, jo, pods))

    # 46. type Job with ports slipped past admission (a CRD without the rule): InvalidSpec,
    # the Job kept as last applied.
    p, k = new("backfill", "data", copy.deepcopy(backfill))
    d = desired_of(request(p))
    jo = observe_all(p, d, k, job_status("Running"), workload_kind="Job")
    req = converge(request(p, jo))
    req["parent"]["spec"]["ports"] = [{"name": "http", "port": 8080}]
    req["parent"]["metadata"]["generation"] = 2
    cases["invalid-spec-job-ports"] = converge(req)

    # 47. type CronJob, the CronJob made, no run yet: Available NotYetRun.
    nightly = {"type": "CronJob", "image": "ghcr.io/acme/reports:3.2", "args": ["nightly"],
               "cronJob": {"schedule": "0 3 * * *", "timeZone": "Europe/Berlin", "concurrencyPolicy": "Forbid", "startingDeadlineSeconds": 600,
                           "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 2},
               "job": {"backoffLimit": 1, "activeDeadlineSeconds": 1800},
               "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}}}
    p, k = new("nightly-report", "finance", copy.deepcopy(nightly))
    d = desired_of(request(p))
    cases["cronjob-not-yet-run"] = converge(request(p, observe_all(p, d, k, {}, workload_kind="CronJob")))

    # 48. type CronJob, the last finished run failed (exit 2): Available False names the Job
    # and the crash of its pod; the run before succeeded.
    p, k = new("nightly-report", "finance", copy.deepcopy(nightly))
    d = desired_of(request(p))
    cst = {"lastScheduleTime": "2026-11-29T02:00:00Z", "lastSuccessfulTime": "2026-11-28T02:01:40Z"}
    co = observe_all(p, d, k, cst, workload_kind="CronJob")
    cron = [o for o in co if o["kind"] == "CronJob"][0]
    ok = cron_job_run(p, cron, "nightly-report-29405940", k, "Complete", "2026-11-28T02:00:00Z", "2026-11-28T02:01:40Z")
    bad = cron_job_run(p, cron, "nightly-report-29407380", k + 1, "Failed", "2026-11-29T02:00:00Z", "2026-11-29T02:03:12Z", failed=2)
    pods = [job_pod("nightly-report-29407380-q8w7e", p, bad, k, exit_code=2), job_pod("nightly-report-29407380-r5t4y", p, bad, k + 1, exit_code=2)]
    pods[0]["metadata"]["creationTimestamp"] = "2026-11-29T02:00:01Z"
    pods[1]["metadata"]["creationTimestamp"] = "2026-11-29T02:01:30Z"
    cases["cronjob-last-run-failed"] = converge(request(p, co, pods, jobs=[ok, bad]))

    # 49. type CronJob, suspended, its last run succeeded: Stalled Suspended, Available True.
    susp = copy.deepcopy(nightly)
    susp["cronJob"]["suspend"] = True
    p, k = new("nightly-report", "finance", susp)
    d = desired_of(request(p))
    co = observe_all(p, d, k, {"lastScheduleTime": "2026-11-28T02:00:00Z", "lastSuccessfulTime": "2026-11-28T02:01:40Z"}, workload_kind="CronJob")
    cron = [o for o in co if o["kind"] == "CronJob"][0]
    ok = cron_job_run(p, cron, "nightly-report-29405940", k, "Complete", "2026-11-28T02:00:00Z", "2026-11-28T02:01:40Z")
    zp = job_pod("nightly-report-29405940-z9x8c", p, ok, k, exit_code=0)
    zp["metadata"]["creationTimestamp"] = "2026-11-28T02:00:01Z"
    cases["cronjob-suspended"] = converge(request(p, co, [zp], jobs=[ok]))


if __name__ == "__main__":
    main()
