package hooks

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/stackdome/stackdome/internal/mcrequest"
)

// The objects other controllers make, as the API server stores them: the
// chart's error-page Service (helm), the team's own objects (kubectl), the
// workloads' status (their controllers) and a CronJob's Jobs; the pods are
// in fixturegen_pods_test.go.

// errorServiceIP is the chart's error-page Service's ClusterIP: the customize
// hook relates the Service for every spec with public ports and error
// pages on, and its ClusterIP goes into the app's own EndpointSlice. A
// ClusterIP is never dialed by the hook.
const errorServiceIP = "10.96.48.17"

func mtime(s string) metav1.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return metav1.NewTime(t)
}

func ptr[T any](v T) *T { return &v }

func fields(s string) *metav1.FieldsV1 { return metav1.NewFieldsV1(s) }

func entry(apiVersion, manager, subresource, at, f string) metav1.ManagedFieldsEntry {
	t := mtime(at)
	return metav1.ManagedFieldsEntry{APIVersion: apiVersion, FieldsType: "FieldsV1", FieldsV1: fields(f),
		Manager: manager, Operation: metav1.ManagedFieldsOperationUpdate, Subresource: subresource, Time: &t}
}

// errorService is the chart's error-page Service in the release namespace.
func errorService() mcrequest.Object {
	labels := map[string]string{"app.kubernetes.io/component": "controller", "app.kubernetes.io/instance": "stackdome",
		"app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/name": "stackdome",
		"app.kubernetes.io/version": "0.1.0", "helm.sh/chart": "stackdome-0.1.0", "stackdome.io/service": "error-pages"}
	return mcrequest.ToObject(corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{
			Annotations:       map[string]string{"meta.helm.sh/release-name": "stackdome", "meta.helm.sh/release-namespace": "stackdome"},
			CreationTimestamp: mtime("2026-11-29T10:00:00Z"), Labels: labels, Name: "stackdome-error-pages",
			Namespace: mcrequest.ReleaseNamespace, ResourceVersion: "377", UID: uidOf(900),
			ManagedFields: []metav1.ManagedFieldsEntry{entry("v1", "helm", "", "2026-11-29T10:00:00Z",
				`{"f:metadata":{"f:labels":{".":{}}},"f:spec":{"f:ports":{},"f:selector":{},"f:type":{}}}`)},
		},
		Spec: corev1.ServiceSpec{
			ClusterIP: errorServiceIP, ClusterIPs: []string{errorServiceIP},
			InternalTrafficPolicy: ptr(corev1.ServiceInternalTrafficPolicyCluster),
			IPFamilies:            []corev1.IPFamily{corev1.IPv4Protocol}, IPFamilyPolicy: ptr(corev1.IPFamilyPolicySingleStack),
			Ports: []corev1.ServicePort{{Name: "errors", Port: 8082, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString("errors")}},
			Selector: map[string]string{"app.kubernetes.io/component": "controller", "app.kubernetes.io/instance": "stackdome",
				"app.kubernetes.io/name": "stackdome"},
			SessionAffinity: corev1.ServiceAffinityNone, Type: corev1.ServiceTypeClusterIP,
		},
	})
}

func uidOf(n int) types.UID { return types.UID(mcrequest.UID(n)) }

// teamMiddleware is the team's own Traefik Middleware, number n: the
// customize hook relates the ones a spec's middlewares name.
func teamMiddleware(ns, name, spec string, n int) mcrequest.Object {
	return mcrequest.Object{
		"apiVersion": "traefik.io/v1alpha1", "kind": "Middleware",
		"metadata": map[string]any{"name": name, "namespace": ns, "uid": mcrequest.UID(900 + n), "resourceVersion": strconv.Itoa(7000 + n),
			"generation": 1, "creationTimestamp": "2026-11-29T09:00:00Z",
			"managedFields": []any{managedFields("traefik.io/v1alpha1", "kubectl-client-side-apply", "", "2026-11-29T09:00:00Z",
				map[string]any{"f:spec": map[string]any{}})}},
		"spec": obj(spec),
	}
}

func teamMeta(ns, name string, n int) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ns, UID: uidOf(950 + n), ResourceVersion: strconv.Itoa(7500 + n),
		CreationTimestamp: mtime("2026-11-29T09:00:00Z"),
		ManagedFields:     []metav1.ManagedFieldsEntry{entry("v1", "kubectl-create", "", "2026-11-29T09:00:00Z", `{"f:data":{}}`)}}
}

// teamConfigMap is the team's ConfigMap, number n.
func teamConfigMap(ns, name string, data map[string]string, n int, binary map[string][]byte) mcrequest.Object {
	return mcrequest.ToObject(corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: teamMeta(ns, name, n), Data: data, BinaryData: binary})
}

// teamSecret is the team's Opaque Secret, number n; data's values are
// base64, as in a manifest.
func teamSecret(ns, name string, data map[string]string, n int) mcrequest.Object {
	d := map[string][]byte{}
	for k, v := range data {
		b, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			panic(fmt.Sprintf("secret %s key %s: %v", name, k, err))
		}
		d[k] = b
	}
	return mcrequest.ToObject(corev1.Secret{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: teamMeta(ns, name, n), Data: d, Type: corev1.SecretTypeOpaque})
}

func b64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// progressing is a Deployment's Progressing condition: status, reason,
// message.
type progressing [3]string

var (
	newRSAvailable = progressing{"True", "NewReplicaSetAvailable", "ReplicaSet has successfully progressed."}
	rsProgressing  = progressing{"True", "ReplicaSetUpdated", "ReplicaSet is progressing."}
)

// depStatus is a Deployment's status as the Deployment controller writes it.
func depStatus(replicas, updated, ready, available int32, prog progressing) appsv1.DeploymentStatus {
	avail := available >= replicas
	cond := map[bool][3]string{true: {"True", "MinimumReplicasAvailable", "Deployment has minimum availability."},
		false: {"False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability."}}[avail]
	return appsv1.DeploymentStatus{
		ObservedGeneration: 1, Replicas: replicas, UpdatedReplicas: updated, ReadyReplicas: ready,
		AvailableReplicas: available, TerminatingReplicas: ptr(int32(0)),
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionStatus(cond[0]), Reason: cond[1], Message: cond[2],
				LastTransitionTime: mtime("2026-11-29T11:00:10Z"), LastUpdateTime: mtime("2026-11-29T11:00:10Z")},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionStatus(prog[0]), Reason: prog[1], Message: prog[2],
				LastTransitionTime: mtime("2026-11-29T11:00:05Z"), LastUpdateTime: mtime("2026-11-29T11:00:10Z")},
		},
	}
}

// jobStatus is a Job's status as the Job controller writes it: Running,
// Complete or Failed.
func jobStatus(result, start, end string, failed int32) batchv1.JobStatus {
	st := batchv1.JobStatus{StartTime: ptr(mtime(start)), Terminating: ptr(int32(0)),
		UncountedTerminatedPods: &batchv1.UncountedTerminatedPods{}, Ready: ptr(int32(0)), Failed: failed}
	cond := func(typ batchv1.JobConditionType, reason, message string) batchv1.JobCondition {
		return batchv1.JobCondition{Type: typ, Status: "True", Reason: reason, Message: message,
			LastProbeTime: mtime(end), LastTransitionTime: mtime(end)}
	}
	switch result {
	case "Running":
		st.Active = 1
	case "Complete":
		const msg = "Reached expected number of succeeded pods"
		st.Succeeded, st.CompletionTime = 1, ptr(mtime(end))
		st.Conditions = []batchv1.JobCondition{cond(batchv1.JobSuccessCriteriaMet, "CompletionsReached", msg), cond(batchv1.JobComplete, "CompletionsReached", msg)}
	default:
		const msg = "Job has reached the specified backoff limit"
		st.Conditions = []batchv1.JobCondition{cond(batchv1.JobFailureTarget, "BackoffLimitExceeded", msg), cond(batchv1.JobFailed, "BackoffLimitExceeded", msg)}
	}
	return st
}

// Typical run times of a Job.
const (
	jobStart = "2026-11-29T11:30:00Z"
	jobEnd   = "2026-11-29T11:31:10Z"
)

// cronJobRun is a Job the CronJob controller made from cron's job template,
// number n, as stored.
func cronJobRun(par, cron mcrequest.Object, name string, n int, result, start, end string, failed int32) mcrequest.Object {
	var tmpl batchv1.JobTemplateSpec
	roundTripInto(mcrequest.Map(cron, "spec", "jobTemplate"), &tmpl)
	uid := mcrequest.UID(700 + n)
	j := batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: mcrequest.Namespace(par), UID: types.UID(uid), ResourceVersion: strconv.Itoa(4000 + n),
			Generation: 1, CreationTimestamp: mtime(start), Labels: tmpl.Labels,
			Annotations: map[string]string{"batch.kubernetes.io/cronjob-scheduled-timestamp": start},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", BlockOwnerDeletion: ptr(true), Controller: ptr(true),
				Kind: "CronJob", Name: mcrequest.Name(cron), UID: types.UID(mcrequest.Str(cron, "metadata", "uid"))}},
			ManagedFields: []metav1.ManagedFieldsEntry{entry("batch/v1", "kube-controller-manager", "", start, `{"f:spec":{}}`)}},
		Spec:   tmpl.Spec,
		Status: jobStatus(result, start, end, failed),
	}
	o := mcrequest.ToObject(j)
	mcrequest.Default(o)
	return o
}

// legacyStatus is a status as the version before checkedAt existed wrote
// it: conditions Available, Converged, Stalled, Reconciling.
func legacyStatus(rev, msg string, conds [4][2]string, ports [][3]any, portCheck, details any) map[string]any {
	st := map[string]any{"observedGeneration": 1, "revision": rev}
	var cs []any
	for i, t := range []string{"Available", "Converged", "Stalled", "Reconciling"} {
		cs = append(cs, map[string]any{"type": t, "status": conds[i][0], "observedGeneration": 1,
			"lastTransitionTime": fixtureEarlier, "reason": conds[i][1], "message": msg})
	}
	st["conditions"] = cs
	if details != nil {
		st["lastFailureDetails"] = details
	}
	if portCheck != nil {
		st["portCheck"] = portCheck
	}
	var ps []any
	for _, p := range ports {
		ps = append(ps, map[string]any{"name": p[0], "port": p[1], "state": p[2]})
	}
	st["ports"] = ps
	return st
}

// roundTripInto decodes v's JSON into out.
func roundTripInto(v, out any) {
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, out)
	}
	if err != nil {
		panic(err)
	}
}
