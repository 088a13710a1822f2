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
// The request is assembled by internal/mcrequest, the one Metacontroller
// stand-in, which the fixture generator uses too.
package syncbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/stackdome/stackdome/hooks"
	"github.com/stackdome/stackdome/internal/mcrequest"
	"github.com/stackdome/stackdome/metacontroller"
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
	// verdicts is that view of Body (namespace bench-ns, its pod IPs).
	verdicts hooks.Verdicts
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
	return BuildShape(fixture, Shape{Pods: pods, Ports: ports[:], Public: true}, view)
}

// Shape is the shape of a request: how many pods, which ports (named http,
// metrics and admin in that order; http public when Public), and whether
// the request is of a rollout under way.
type Shape struct {
	Pods  int
	Ports []int32
	// Public makes the first port public: the app has an IngressRoute,
	// the errors Middleware, the mirrored error-page Service and its
	// EndpointSlice. A private app has its workload and Service alone
	// (and a PodDisruptionBudget from 2 pods).
	Public bool
	// Rollout is the request of a rollout half done: the spec's image is
	// new, the observed Deployment carries the new template with one
	// updated pod surged in, and the old pods still run.
	Rollout bool
}

// portNames name Shape.Ports in order.
var portNames = [...]string{"http", "metrics", "admin"}

// BuildShape makes the request of a StackResource "checkout" of shape s,
// from the golden serving request at fixture, at the status fixpoint of
// view (for a Rollout, the fixpoint of its half-done state: the same pods,
// the same Deployment status). It is an error if the status does not settle.
func BuildShape(fixture string, s Shape, view View) (Payload, error) {
	if len(s.Ports) == 0 || len(s.Ports) > len(portNames) {
		return Payload{}, fmt.Errorf("a shape has 1 to %d ports, not %d", len(portNames), len(s.Ports))
	}
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
	spec["replicas"] = s.Pods
	var ports []any
	for i, p := range s.Ports {
		port := map[string]any{"name": portNames[i], "port": p}
		if i == 0 && s.Public {
			port["public"] = true
		}
		ports = append(ports, port)
	}
	spec["ports"] = ports
	if !s.Public {
		delete(spec, "host")
	}
	delete(parent, "status")
	shells := req["children"].(map[string]any)
	related := req["related"].(map[string]any)
	podShell := firstValue(related["Pod.v1"])

	// The desired children and revision of this spec.
	desired, status, rev, err := desiredOf(req)
	if err != nil {
		return Payload{}, err
	}

	// Observed children: each desired child as the API server stores it
	// after Metacontroller applied it, with the status of the fixture's.
	observe := func(desired []map[string]any, pods int) []mcrequest.Object {
		var children []mcrequest.Object
		for i, d := range desired {
			group := metacontroller.GroupKey(d["kind"].(string), d["apiVersion"].(string))
			shell, _ := shells[group].(map[string]any)[nsMarker+"/"+d["metadata"].(map[string]any)["name"].(string)].(map[string]any)
			st, _ := shell["status"].(map[string]any)
			children = append(children, observedChild(mcrequest.Observed(d, parent, i, st), pods))
		}
		return children
	}
	// Related: the pods, and the error-page Service as the fixture relates it.
	var cluster []mcrequest.Object
	for _, svc := range related["Service.v1"].(map[string]any) {
		cluster = append(cluster, svc.(map[string]any))
	}
	for i := range s.Pods {
		cluster = append(cluster, relatedPod(podShell, rev, i, s.Ports))
	}
	cust, err := hooks.DefaultConfig().Customize(mcrequest.Customize(parent))
	if err != nil {
		return Payload{}, err
	}
	build := &mcrequest.Sync{Parent: parent, Children: observe(desired, s.Pods), Cluster: cluster, Rules: cust.RelatedResources}

	verdicts, err := viewOf(build, view)
	if err != nil {
		return Payload{}, err
	}
	if status, err = fixpoint(build, status, verdicts); err != nil {
		return Payload{}, err
	}

	if s.Rollout {
		// A new image: a new revision. Metacontroller has applied the new
		// template; the Deployment surged one updated pod, which is ready,
		// and the old ones still run.
		spec["image"] = strings.Replace(spec["image"].(string), ":", ":next-", 1)
		resp, _, err := hooks.Sync(build.Request(), nil, Now)
		if err != nil {
			return Payload{}, err
		}
		desired, _, next, err := answerOf(resp)
		if err != nil {
			return Payload{}, err
		}
		if next == rev {
			return Payload{}, fmt.Errorf("the new image left the revision at %s", rev)
		}
		build.Children = observe(desired, s.Pods)
		for _, c := range build.Children {
			if c["kind"] != "Deployment" {
				continue
			}
			st := c["status"].(map[string]any)
			st["replicas"] = s.Pods + 1
			st["updatedReplicas"] = 1
			st["readyReplicas"] = s.Pods + 1
			st["availableReplicas"] = s.Pods + 1
		}
		build.Cluster = append(build.Cluster, relatedPod(podShell, next, s.Pods, s.Ports))
		if verdicts, err = viewOf(build, view); err != nil {
			return Payload{}, err
		}
		if _, err = fixpoint(build, status, verdicts); err != nil {
			return Payload{}, err
		}
	}
	body, err := json.Marshal(build.Request())
	if err != nil {
		return Payload{}, err
	}
	pods := s.Pods
	if s.Rollout {
		pods++
	}
	return Payload{Body: body, Pods: pods, View: view, verdicts: verdicts}, nil
}
