// Package syncbench measures the sync hook over HTTP against two baselines
// on the same server and client: the floor (validate the JSON, write a fixed
// answer of the same size) and a generic hook (decode into map[string]any,
// encode an answer of the same size). This file builds the requests: what
// Metacontroller v4.17.2 sends to the chart's sync hook (hook version v2:
// keys namespace/name) for a Service with 3 ports, its observed Deployment,
// Service, IngressRoute and error wiring, the related error-page Service and
// n related pods with full managedFields, each at the status fixpoint of one
// view of the verifier (View): the answer's status is the request's, as at a
// live server's steady state, where Metacontroller then writes nothing.
package syncbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stackdome/stackdome/hooks"
	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/portcheck"
	"github.com/stackdome/stackdome/schema"
)

// Markers every request built here carries, so that For can make distinct
// resources of one template without syncing each: the namespace (the
// revision does not depend on it) and the first three octets of pod IPs.
const (
	nsMarker = "bench-ns"
	ipMarker = "127.250.250."
)

// Now is the clock the payloads' status was computed at.
var Now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// Payload is one sync request body, built for namespace bench-ns with pod
// IPs 127.250.250.1…n.
type Payload struct {
	Body []byte
	Pods int
	View View // the verifier's view the status is the fixpoint of
}

// At returns the body for namespace ns with pod IPs ipPrefix1…n; ipPrefix
// is the first three octets and a dot ("127.0.0."). The first pod by name,
// the one whose ports are dialed, is ipPrefix1.
func (p Payload) At(ns, ipPrefix string) []byte {
	b := bytes.ReplaceAll(p.Body, []byte(`"`+nsMarker+`"`), []byte(`"`+ns+`"`))
	b = bytes.ReplaceAll(b, []byte(`"`+nsMarker+`/`), []byte(`"`+ns+`/`)) // the keys
	return bytes.ReplaceAll(b, []byte(ipMarker), []byte(ipPrefix))
}

// For returns the body of distinct resource i (0 ≤ i < 51200): namespace
// ns-<i>, pod IPs 127.<1+i/256>.<i%256>.1…n, and host r<i>.checkout.example.com,
// so that its spec, and the children built of it, are its own too (the host
// is not part of the pod template: the revision stays the pods').
func (p Payload) For(i int) []byte {
	b := p.At(fmt.Sprintf("ns-%d", i), fmt.Sprintf("127.%d.%d.", 1+i/256, i%256))
	return bytes.ReplaceAll(b, []byte(host), fmt.Appendf(nil, "r%d.%s", i, host))
}

// host is the golden serving request's, in the spec, the status URL, the
// IngressRoute and the last-applied annotations.
const host = "checkout.example.com"

// View is what the verifier knows when a payload's status was computed: the
// request is at the status fixpoint of that view.
type View int

const (
	// Verified: the verifier holds an Open verdict on every port of the
	// dialed pod, dialed less than --port-recheck ago. The answer is Serving,
	// asks for no dial and no resync: a healthy app at steady state.
	Verified View = iota
	// Unverified: the verifier knows nothing of the resource (a new one, or
	// every dial still hanging). The answer is VerifyingPorts and asks for
	// one dial of the first pod.
	Unverified
)

// Build makes the request of a StackResource "checkout" serving on ports
// (named http — public —, metrics and admin) with pods pods, from the golden
// serving request at fixture (testdata/sync/serving.request.json), at the
// status fixpoint of view: Sync answers it with the status it carries. It
// is an error if the status does not settle.
func Build(fixture string, pods int, ports [3]int32, view View) (Payload, error) {
	raw, err := os.ReadFile(fixture)
	if err != nil {
		return Payload{}, err
	}
	raw = bytes.ReplaceAll(raw, []byte(`"shop"`), []byte(`"`+nsMarker+`"`))
	raw = bytes.ReplaceAll(raw, []byte(`"shop/`), []byte(`"`+nsMarker+`/`))
	var req map[string]any
	if err := json.Unmarshal(raw, &req); err != nil {
		return Payload{}, fmt.Errorf("decoding %s: %w", fixture, err)
	}
	parent := req["parent"].(map[string]any)
	spec := parent["spec"].(map[string]any)
	spec["replicas"] = pods
	spec["ports"] = []any{
		map[string]any{"name": "http", "port": ports[0], "public": true},
		map[string]any{"name": "metrics", "port": ports[1]},
		map[string]any{"name": "admin", "port": ports[2]},
	}
	delete(parent, "status")
	shells := req["children"].(map[string]any)
	related := req["related"].(map[string]any)
	podShell := firstValue(related["Pod.v1"])

	// The desired children and revision of this spec.
	resp, _, err := syncMap(req, nil)
	if err != nil {
		return Payload{}, err
	}
	status := resp.Status
	var desired []map[string]any
	if err := roundTrip(resp.Children, &desired); err != nil {
		return Payload{}, err
	}
	var st struct{ Revision string }
	if err := roundTrip(status, &st); err != nil {
		return Payload{}, err
	}

	// Observed children: each desired child as the API server stores it
	// after Metacontroller applied it.
	children := map[string]any{}
	for g := range shells {
		children[g] = map[string]any{}
	}
	for _, d := range desired {
		group := metacontroller.GroupKey(d["kind"].(string), d["apiVersion"].(string))
		name := d["metadata"].(map[string]any)["name"].(string)
		key := nsMarker + "/" + name
		shell, _ := shells[group].(map[string]any)[key].(map[string]any)
		children[group].(map[string]any)[key] = observedChild(d, shell, pods)
	}
	req["children"] = children

	podsByName := map[string]any{}
	for i := range pods {
		p := relatedPod(podShell, st.Revision, i, ports)
		podsByName[nsMarker+"/"+p["metadata"].(map[string]any)["name"].(string)] = p
	}
	related["Pod.v1"] = podsByName // and the error-page Service as the fixture relates it

	// The verifier's view: its verdict is on the pod Sync asks to dial.
	var verdicts hooks.Verdicts
	if view == Verified {
		_, jobs, err := syncMap(req, nil)
		if err != nil {
			return Payload{}, err
		}
		if len(jobs) != 1 {
			return Payload{}, fmt.Errorf("the unverified request asks for %d dials, want 1", len(jobs))
		}
		verdicts = allOpen{jobs[0].Job}
	}
	// Feed status back until it no longer changes: the request a live
	// server with that view sees at steady state.
	settled := false
	for range 5 {
		parent["status"] = status
		resp, _, err := syncMap(req, verdicts)
		if err != nil {
			return Payload{}, err
		}
		if settled = StatusDiff(status, resp.Status) == ""; settled {
			break
		}
		status = resp.Status
	}
	if !settled {
		return Payload{}, fmt.Errorf("the status does not settle in 5 syncs: %s", StatusDiff(parent["status"], status))
	}
	body, err := json.Marshal(req)
	if err != nil {
		return Payload{}, err
	}
	return Payload{Body: body, Pods: pods, View: view}, nil
}

func syncMap(req map[string]any, verdicts hooks.Verdicts) (*metacontroller.SyncResponse, []hooks.DialJob, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, nil, err
	}
	var r metacontroller.SyncRequest
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, nil, err
	}
	return hooks.Sync(&r, verdicts, Now)
}

// allOpen is a verifier holding, for job's key, a verdict of Now on job's
// IP with every port Open.
type allOpen struct{ job portcheck.Job }

func (v allOpen) Get(k portcheck.Key) (portcheck.Result, bool) {
	if k != v.job.Key {
		return portcheck.Result{}, false
	}
	res := portcheck.Result{IP: v.job.IP, CheckedAt: Now}
	for _, p := range v.job.Ports {
		res.Ports = append(res.Ports, portcheck.PortResult{Name: p.Name, Port: p.Port, State: portcheck.Open})
	}
	return res, true
}

func (allOpen) Pending(portcheck.Key) bool { return false }

// StatusDiff compares two statuses as JSON values (a struct, a map or raw
// JSON bytes): "" when equal, else a cmp.Diff (-a +b).
func StatusDiff(a, b any) string {
	var va, vb any
	for _, x := range []struct {
		in  any
		out *any
	}{{a, &va}, {b, &vb}} {
		raw, ok := x.in.(json.RawMessage)
		if !ok {
			var err error
			if raw, err = json.Marshal(x.in); err != nil {
				return err.Error()
			}
		}
		if err := json.Unmarshal(raw, x.out); err != nil {
			return err.Error()
		}
	}
	return cmp.Diff(va, vb)
}

func roundTrip(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

func firstValue(m any) map[string]any {
	for _, v := range m.(map[string]any) {
		return v.(map[string]any)
	}
	return nil
}

// observedChild is desired as stored: the shell's server-set metadata and
// status, the shell's server-defaulted spec under the desired one, and
// Metacontroller's last-applied annotation.
func observedChild(desired, shell map[string]any, pods int) map[string]any {
	la, _ := json.Marshal(desired)
	var out map[string]any
	_ = roundTrip(desired, &out)
	md := out["metadata"].(map[string]any)
	if shell != nil {
		for k, v := range shell["metadata"].(map[string]any) {
			if _, ok := md[k]; !ok {
				md[k] = v
			}
		}
		if s, ok := shell["spec"].(map[string]any); ok {
			out["spec"] = merge(s, out["spec"].(map[string]any))
		}
		if s, ok := shell["status"]; ok {
			out["status"] = s
		}
	}
	md["namespace"] = nsMarker
	ann, _ := md["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
	}
	ann["metacontroller.k8s.io/last-applied-configuration"] = string(la)
	md["annotations"] = ann
	if out["kind"] == "Deployment" {
		st := out["status"].(map[string]any)
		for _, k := range []string{"replicas", "updatedReplicas", "readyReplicas", "availableReplicas"} {
			st[k] = pods
		}
	}
	return out
}

// merge returns base with over laid on top; lists are replaced whole.
func merge(base, over map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if b, ok := out[k].(map[string]any); ok {
			if o, ok := v.(map[string]any); ok {
				out[k] = merge(b, o)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// relatedPod is pod i of the current revision, running and ready, with the
// managedFields, volumes and tolerations a real cluster gives every pod.
func relatedPod(shell map[string]any, rev string, i int, ports [3]int32) map[string]any {
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
	_ = json.Unmarshal([]byte(strings.NewReplacer("@IP@", podIP(i), "@P0@", fmt.Sprint(ports[0]), "@P1@", fmt.Sprint(ports[1]), "@P2@", fmt.Sprint(ports[2])).Replace(podManagedFields)), &mf)
	md["managedFields"] = mf

	spec := p["spec"].(map[string]any)
	c := spec["containers"].([]any)[0].(map[string]any)
	c["ports"] = []any{
		map[string]any{"containerPort": ports[0], "name": "http", "protocol": "TCP"},
		map[string]any{"containerPort": ports[1], "name": "metrics", "protocol": "TCP"},
		map[string]any{"containerPort": ports[2], "name": "admin", "protocol": "TCP"},
	}
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
{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:stackdome.io/revision":{}},"f:generateName":{},"f:labels":{".":{},"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/managed-by":{},"f:app.kubernetes.io/name":{},"f:controller-uid":{},"f:pod-template-hash":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"5d0001fc-1f2e-4c3d-8b4a-9e00000001fc\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":@P0@,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}},"k:{\"containerPort\":@P1@,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}},"k:{\"containerPort\":@P2@,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:readinessProbe":{".":{},"f:failureThreshold":{},"f:periodSeconds":{},"f:successThreshold":{},"f:tcpSocket":{".":{},"f:port":{}},"f:timeoutSeconds":{}},"f:resources":{},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}},"manager":"kube-controller-manager","operation":"Update","time":"2026-11-29T11:00:10Z"},
{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"PodReadyToStartContainers\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"@IP@\"}":{".":{},"f:ip":{}}},"f:startTime":{}}},"manager":"kubelet","operation":"Update","subresource":"status","time":"2026-11-29T11:00:20Z"}
]`

// What the API server and admission default on every pod.
const podSpecDefaults = `{"dnsPolicy":"ClusterFirst","restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30,
"tolerations":[{"effect":"NoExecute","key":"node.kubernetes.io/not-ready","operator":"Exists","tolerationSeconds":300},{"effect":"NoExecute","key":"node.kubernetes.io/unreachable","operator":"Exists","tolerationSeconds":300}],
"volumes":[{"name":"kube-api-access-x7k2p","projected":{"defaultMode":420,"sources":[{"serviceAccountToken":{"expirationSeconds":3607,"path":"token"}},{"configMap":{"items":[{"key":"ca.crt","path":"ca.crt"}],"name":"kube-root-ca.crt"}},{"downwardAPI":{"items":[{"fieldRef":{"apiVersion":"v1","fieldPath":"metadata.namespace"},"path":"namespace"}]}}]}}]}`
