package syncbench

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/stackdome/stackdome/schema"
)

// The observed children and related pods of a payload, as the API server
// stores them after Metacontroller applied them and the controllers and the
// kubelet ran.

// observedChild is a child as stored (mcrequest.Observed), a Deployment's
// status counting pods replicas, all ready.
func observedChild(o map[string]any, pods int) map[string]any {
	if o["kind"] == "Deployment" {
		st, _ := o["status"].(map[string]any)
		if st == nil {
			st = map[string]any{}
			o["status"] = st
		}
		for _, k := range []string{"replicas", "updatedReplicas", "readyReplicas", "availableReplicas"} {
			st[k] = pods
		}
	}
	return o
}

// relatedPod is pod i of the current revision, running and ready, with the
// managedFields, volumes and tolerations a real cluster gives every pod.
func relatedPod(shell map[string]any, rev string, i int, ports []int32) map[string]any {
	var p map[string]any
	_ = roundTrip(shell, &p)
	md := p["metadata"].(map[string]any)
	name := fmt.Sprintf("checkout-%s-%05d", rev, i)
	md["name"] = name
	md["namespace"] = nsMarker
	md["uid"] = fmt.Sprintf("5d00%04x-1f2e-4c3d-8b4a-9e0000000260", i)
	md["generateName"] = "checkout-" + rev + "-"
	md["annotations"] = map[string]any{schema.AnnotationRevision: rev}
	md["labels"].(map[string]any)["pod-template-hash"] = rev
	md["ownerReferences"].([]any)[0].(map[string]any)["name"] = "checkout-" + rev
	var mf any
	var portFields []string
	for _, p := range ports {
		portFields = append(portFields, strings.ReplaceAll(podPortFields, "@P@", fmt.Sprint(p)))
	}
	_ = json.Unmarshal([]byte(strings.NewReplacer("@IP@", podIP(i), "@PORTS@", strings.Join(portFields, ",")).Replace(podManagedFields)), &mf)
	md["managedFields"] = mf

	spec := p["spec"].(map[string]any)
	c := spec["containers"].([]any)[0].(map[string]any)
	var cports []any
	for j, p := range ports {
		cports = append(cports, map[string]any{"containerPort": p, "name": portNames[j], "protocol": "TCP"})
	}
	c["ports"] = cports
	c["readinessProbe"] = map[string]any{"failureThreshold": 3, "periodSeconds": 10, "successThreshold": 1, "tcpSocket": map[string]any{"port": ports[0]}, "timeoutSeconds": 1}
	c["imagePullPolicy"] = "IfNotPresent"
	c["resources"] = map[string]any{}
	c["terminationMessagePath"] = "/dev/termination-log"
	c["terminationMessagePolicy"] = "File"
	c["volumeMounts"] = []any{map[string]any{"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": "kube-api-access-x7k2p", "readOnly": true}}
	var extra map[string]any
	_ = json.Unmarshal([]byte(podSpecDefaults), &extra)
	for k, v := range extra {
		spec[k] = v
	}
	st := p["status"].(map[string]any)
	st["podIP"] = podIP(i)
	st["podIPs"] = []any{map[string]any{"ip": podIP(i)}}
	return p
}

func podIP(i int) string { return fmt.Sprintf("%s%d", ipMarker, i+1) }

// What kube-controller-manager and the kubelet record on every pod.
const podManagedFields = `[
{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:stackdome.io/revision":{}},"f:generateName":{},"f:labels":{".":{},"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/managed-by":{},"f:app.kubernetes.io/name":{},"f:controller-uid":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"5d0001fc-1f2e-4c3d-8b4a-9e00000001fc\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},@PORTS@},"f:readinessProbe":{".":{},"f:failureThreshold":{},"f:periodSeconds":{},"f:successThreshold":{},"f:tcpSocket":{".":{},"f:port":{}},"f:timeoutSeconds":{}},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}},"manager":"kube-controller-manager","operation":"Update","time":"2026-11-29T11:00:10Z"},
{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"PodReadyToStartContainers\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"@IP@\"}":{".":{},"f:ip":{}}},"f:startTime":{}}},"manager":"kubelet","operation":"Update","subresource":"status","time":"2026-11-29T11:00:20Z"}
]`

// The managedFields entry of one container port (@P@).
const podPortFields = `"k:{\"containerPort\":@P@,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}`

// What the API server and admission default on every pod.
const podSpecDefaults = `{"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30,
"tolerations":[{"effect":"NoExecute","key":"node.kubernetes.io/not-ready","operator":"Exists","tolerationSeconds":300},{"effect":"NoExecute","key":"node.kubernetes.io/unreachable","operator":"Exists","tolerationSeconds":300}],
"volumes":[{"name":"kube-api-access-x7k2p","projected":{"defaultMode":420,"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},{"configMap":{"items":[{"key":"ca.crt","path":"ca.crt"}],"name":"kube-root-ca.crt"}},{"downwardAPI":{"items":[{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"},"path":"namespace"}]}}]}}]}`
