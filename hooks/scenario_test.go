package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/stackdome/stackdome/internal/mcrequest"
	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/portcheck"
	"github.com/stackdome/stackdome/schema"
)

// A scenario is the port gate over time, as data: each step is one sync at a
// clock offset, with the workload and pod Metacontroller would send, the
// verdict the verifier holds, and the status expected afterwards. The status
// each step returns is fed to the next as the parent's, as Metacontroller
// writes it.
type scenario struct {
	About  string          `json:"about"`
	Name   string          `json:"name"`
	Spec   json.RawMessage `json:"spec"`
	Config struct {
		PortCheckGrace string `json:"portCheckGrace"`
	} `json:"config"`
	Steps []step `json:"steps"`
	// Writes lists the facts a user can tell apart from creation to the
	// last step, one entry a fact; when set, the answers may differ from
	// the status each was given (a Metacontroller status write) at most
	// that many times (TestScenarioWrites).
	Writes []string `json:"writes"`
}

type step struct {
	At            duration        `json:"at"`
	Note          string          `json:"note"`
	Replica       string          `json:"replica"`       // which stackdome replica answers (documentation: each has its own verdicts)
	Spec          json.RawMessage `json:"spec"`          // a new spec (a new revision) from this step on
	Workload      string          `json:"workload"`      // serving | rolling | previous | missing
	WorkloadPatch json.RawMessage `json:"workloadPatch"` // a JSON merge patch over the observed workload
	Pod           *scenarioPod    `json:"pod"`           // the app's one pod, nil for none
	Pods          []scenarioPod   `json:"pods"`          // or several
	Verdict       *scenarioResult `json:"verdict"`       // what the answering replica's verifier holds for the workload revision
	Pending       bool            `json:"pending"`       // a dial is queued or in flight
	Missing       []string        `json:"missing"`       // children besides the workload Metacontroller could not create, as Kind/name
	Want          summary         `json:"want"`
	// Unchanged asserts the answer's status is exactly the status the step
	// was given: the replica changed nothing, so Metacontroller writes nothing.
	Unchanged bool `json:"unchanged"`
	// Lagging are children Metacontroller created that its informers do
	// not show yet, as Kind/name: the request leaves them out, and its
	// create of one is refused AlreadyExists and swallowed
	// (pkg/controller/common/manage_children.go at v4.17.2), so nothing
	// of it is written or deleted.
	Lagging []string `json:"lagging"`
}

type scenarioPod struct {
	Name       string          `json:"name"` // default <name>-<hash>-abcde
	IP         string          `json:"ip"`
	Phase      string          `json:"phase"` // default Running
	Ready      bool            `json:"ready"`
	ReadySince duration        `json:"readySince"`
	Revision   string          `json:"revision"` // current (default) | previous: the spec revision it was made from
	Hash       string          `json:"hash"`     // its workload revision label; default the spec revision
	Created    duration        `json:"created"`  // creationTimestamp offset
	Container  json.RawMessage `json:"container"`
	Patch      json.RawMessage `json:"patch"` // a JSON merge patch over the pod
}

type scenarioResult struct {
	IP        string            `json:"ip"` // default: the pod's
	CheckedAt duration          `json:"checkedAt"`
	Stale     bool              `json:"stale"`
	Ports     map[string]string `json:"ports"` // port name → Open | Closed | Inconclusive
}

// summary is what a step asserts of the answer.
type summary struct {
	Available string   `json:"available"` // "True Serving"
	Converged string   `json:"converged"` // "False"
	Stalled   string   `json:"stalled"`   // "False", or "True <reason>"
	KStatus   string   `json:"kstatus"`   // Current | InProgress | Failed
	Details   []string `json:"details"`   // "<type> <reason> [port]"
	PortCheck string   `json:"portCheck"` // failingSince as an offset, "" when unset
	CheckedAt string   `json:"checkedAt"` // portCheck.checkedAt as an offset, "" when unset
	Ports     string   `json:"ports"`     // "http=Open metrics=Closed"
	Dials     []string `json:"dials"`     // "dial" | "forget+dial" per job
	Resync    float64  `json:"resync"`
	// Held: the answer is withheld (HeldError: Metacontroller syncs again
	// after Retry-After, changing nothing), and only Dials is compared.
	Held bool `json:"held,omitempty"`
}

type duration time.Duration

func (d *duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	*d = duration(v)
	return err
}

// scriptedVerdicts is the verifier as a step describes it.
type scriptedVerdicts struct {
	key     portcheck.Key
	result  *portcheck.Result
	pending bool
}

func (v scriptedVerdicts) Get(k portcheck.Key) (portcheck.Result, bool) {
	if v.result == nil || k != v.key {
		return portcheck.Result{}, false
	}
	return *v.result, true
}
func (v scriptedVerdicts) Pending(k portcheck.Key) bool { return v.pending && k == v.key }

func TestScenarios(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "scenarios", "*.json"))
	require.NoError(t, err)
	var n int
	for _, path := range paths {
		if strings.HasSuffix(path, ".golden.json") || strings.HasSuffix(path, ".batch.json") {
			continue // batch scenarios: TestBatchScenarios
		}
		n++
		t.Run(strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
			b, err := os.ReadFile(path)
			require.NoError(t, err)
			var sc scenario
			require.NoError(t, json.Unmarshal(b, &sc))
			requireScenarioGolden(t, path, sc.About, runScenario(t, sc))
		})
	}
	require.GreaterOrEqual(t, n, 8)
}

// requireScenarioGolden holds the answers of every step of the scenario at
// path, as the wire carries them (the e2e suite applies each to a real API
// server), against <path less .json>.golden.json; -update rewrites it.
func requireScenarioGolden(t *testing.T, path, about string, steps []goldenStep) {
	t.Helper()
	got := indent(t, map[string]any{"about": about, "steps": steps})
	golden(t, strings.TrimSuffix(path, ".json")+".golden.json", got, *update, "run go test ./hooks -update")
}

// goldenStep is one scenario step on the wire: the parent Metacontroller
// sent and the answer.
type goldenStep struct {
	At       string                       `json:"at"`
	Note     string                       `json:"note"`
	Request  map[string]any               `json:"request"`
	Response *metacontroller.SyncResponse `json:"response,omitempty"`
	Held     string                       `json:"held,omitempty"` // the 429's reason, when the answer is held
}

func runScenario(t *testing.T, sc scenario) []goldenStep {
	steps, _ := runScenarioAs(t, sc, false)
	return steps
}

// runScenarioAs runs sc. asMetacontroller runs it as the real cluster does
// with the chart's error pages: the error-page Service is related, and each
// sync observes the children of the answer before it, as Metacontroller
// applied them (none at the first step; those the step names in missing are
// left out), rather than the children of the current spec. It then also
// returns each child's writes, in order: Metacontroller creates a child an
// answer returns and it does not observe, and updates one whose answer
// differs from its last applied one (the answer before).
func runScenarioAs(t *testing.T, sc scenario, asMetacontroller bool) ([]goldenStep, map[string][]string) {
	var steps []goldenStep
	// Scenarios are the port gate over time. They run as an install without
	// error pages (the chart's errorPages.enabled=false): their requests
	// relate no error-page Service, and the wiring has its own tests.
	cfg := DefaultConfig()
	cfg.NoErrorService = !asMetacontroller
	applied := map[string]mcrequest.Object{} // Kind/name → the child as last answered
	writes := map[string][]string{}
	if sc.Config.PortCheckGrace != "" {
		d, err := time.ParseDuration(sc.Config.PortCheckGrace)
		require.NoError(t, err)
		cfg.PortCheckGrace = d
	}
	spec := sc.Spec
	generation := int64(1)
	var status any = map[string]any{}
	var prevWorkload, workloadNow mcrequest.Object
	var prevRev, rev string
	for i, st := range sc.Steps {
		name := fmt.Sprintf("step %d at %s (%s)", i, time.Duration(st.At), st.Note)
		now := testNow.Add(time.Duration(st.At))
		if st.Spec != nil {
			spec = st.Spec
			generation++
		}
		parent := stackResource(t, mcrequest.StackResource{Name: sc.Name, Namespace: "scenario",
			UID: "6d1c0f4e-0000-4000-8000-000000000001", Generation: generation, Spec: spec, Status: status})
		rawParent := mcrequest.Raw(parent)

		// The desired workload of this spec, as a serving cluster would hold it.
		desired := firstAnswer(t, cfg, parent, now)
		w := mcrequest.Find(desired, "Deployment", "StatefulSet")
		require.NotNil(t, w, name)
		if old := appliedWorkload(applied); asMetacontroller && old != nil {
			w = old // what Metacontroller applied, not yet the new spec's
		}
		if newRev := mcrequest.Revision(w); newRev != rev {
			prevRev, rev, prevWorkload = rev, newRev, workloadNow
		}
		workloadNow = w

		// Every other child as Metacontroller created it, but those the
		// step says it could not.
		observedChildren := desired
		var cluster []mcrequest.Object
		if asMetacontroller {
			observedChildren = nil
			for _, c := range applied {
				observedChildren = append(observedChildren, c)
			}
			cluster = append(cluster, errorPagesService(cfg))
		}
		var children []mcrequest.Object
		for _, c := range observedChildren {
			if kn := mcrequest.KindName(c); c["kind"] == w["kind"] || slices.Contains(st.Missing, kn) || slices.Contains(st.Lagging, kn) {
				continue
			}
			children = append(children, mcrequest.Observed(c, parent, len(children), nil))
		}
		if obj := scenarioWorkload(t, st.Workload, w, prevWorkload); obj != nil {
			if st.WorkloadPatch != nil {
				obj = mergePatch(t, obj, st.WorkloadPatch)
			}
			st, _ := obj["status"].(map[string]any)
			children = append(children, mcrequest.Observed(obj, parent, len(children), st))
		}
		pods := st.Pods
		if st.Pod != nil {
			pods = append([]scenarioPod{*st.Pod}, pods...)
		}
		podIP, hash := "", rev
		for i, sp := range pods {
			podRev := rev
			if sp.Revision == "previous" {
				podRev = prevRev
			}
			if sp.Hash == "" {
				sp.Hash = podRev
			}
			if sp.Name == "" {
				sp.Name = sc.Name + "-" + sp.Hash + "-abcde"
			}
			if i == 0 {
				podIP, hash = sp.IP, sp.Hash
			}
			obj := scenarioPodObject("scenario", sp.Name, podRev, w, sp)
			if sp.Patch != nil {
				obj = mergePatch(t, obj, sp.Patch)
			}
			cluster = append(cluster, obj)
		}
		req := standIn(t, cfg, parent, children, cluster)
		// The verdict belongs to the workload revision of the first pod.
		verdicts := scriptedVerdicts{key: portcheck.Key{Namespace: "scenario", Name: sc.Name, Revision: hash}, pending: st.Pending}
		if st.Verdict != nil {
			verdicts.result = scenarioVerdict(t, spec, *st.Verdict, podIP)
		}

		resp, jobs, err := cfg.Sync(req, verdicts, now)
		if held := (*HeldError)(nil); errors.As(err, &held) {
			// Metacontroller changes nothing: the status and the children
			// stay as they were for the next step.
			if diff := cmp.Diff(st.Want, summary{Held: true, Dials: dialsOf(jobs)}); diff != "" {
				t.Fatalf("%s: held (%v) (-want +got):\n%s", name, err, diff)
			}
			steps = append(steps, goldenStep{At: time.Duration(st.At).String(), Note: st.Note,
				Request: map[string]any{"parent": roundTrip(t, json.RawMessage(rawParent))}, Held: held.Reason})
			continue
		}
		require.NoError(t, err, name)
		got := summarize(t, resp, jobs, rawParent)
		if asMetacontroller {
			// A child the answer creates is awaited with a resync (the
			// child-settle window): which children are observed is what
			// this mode changes, so the resync asked for may differ.
			got.Resync = st.Want.Resync
		}
		if diff := cmp.Diff(st.Want, got); diff != "" {
			t.Fatalf("%s: status differs (-want +got):\n%s\nstatus: %s", name, diff, indent(t, resp.Status))
		}
		if st.Unchanged {
			if diff := cmp.Diff(string(indent(t, status)), string(indent(t, roundTrip(t, resp.Status)))); diff != "" {
				t.Fatalf("%s: the replica changed the status (-given +answered):\n%s", name, diff)
			}
		}
		requireFixpointWith(t, cfg, req, resp, verdicts, now)
		requireFreshReplicaAgrees(t, cfg, req, resp, verdicts, now)
		if asMetacontroller {
			answered := map[string]mcrequest.Object{}
			for _, m := range mcrequest.Objects(resp.Children) {
				kn := mcrequest.KindName(m)
				answered[kn] = m
				old, ok := applied[kn]
				switch {
				case slices.Contains(st.Lagging, kn):
					answered[kn] = old
					if !cmp.Equal(old, m) {
						writes[kn] = append(writes[kn], "changed while not shown at "+name+", a change Metacontroller cannot make (its create is refused AlreadyExists) (-before +after):\n"+cmp.Diff(old, m))
					}
				case !ok || slices.Contains(st.Missing, kn):
					writes[kn] = append(writes[kn], "created at "+name)
				case !cmp.Equal(old, m):
					writes[kn] = append(writes[kn], "updated at "+name+" (-before +after):\n"+cmp.Diff(old, m))
				}
			}
			for kn, c := range applied {
				switch {
				case answered[kn] != nil:
				case slices.Contains(st.Lagging, kn):
					answered[kn] = c // not observed: not deleted
				default:
					writes[kn] = append(writes[kn], "deleted at "+name)
				}
			}
			applied = answered
		}
		status = roundTrip(t, resp.Status)
		steps = append(steps, goldenStep{At: time.Duration(st.At).String(), Note: st.Note,
			Request: map[string]any{"parent": roundTrip(t, json.RawMessage(rawParent))}, Response: resp})
	}
	return steps, writes
}

// appliedWorkload is the Deployment or StatefulSet among applied, or nil.
func appliedWorkload(applied map[string]mcrequest.Object) mcrequest.Object {
	for _, c := range applied {
		if c["kind"] == "Deployment" || c["kind"] == "StatefulSet" {
			return c
		}
	}
	return nil
}

// errorPagesService is the chart's error-page Service as the API server
// holds it: a ClusterIP, the errors port.
func errorPagesService(cfg Config) object {
	return object{
		"apiVersion": "v1", "kind": "Service",
		"metadata": object{"name": cfg.ErrorService.Name, "namespace": cfg.ErrorService.Namespace},
		"spec": object{"type": "ClusterIP", "clusterIP": "10.96.48.17", "clusterIPs": []any{"10.96.48.17"},
			"ports": []any{object{"name": "errors", "port": cfg.ErrorService.Port, "protocol": "TCP", "targetPort": "errors"}}},
	}
}

// withStatus is req with status as the parent's status, as Metacontroller
// sends the next sync after writing it.
func withStatus(t testing.TB, req *metacontroller.SyncRequest, status any) *metacontroller.SyncRequest {
	var p map[string]any
	require.NoError(t, json.Unmarshal(req.Parent, &p))
	p["status"] = roundTrip(t, status)
	again := *req
	again.Parent = mustJSON(t, p)
	return &again
}

// requireFixpointWith is requireFixpoint for a Config.
func requireFixpointWith(t *testing.T, cfg Config, req *metacontroller.SyncRequest, resp *metacontroller.SyncResponse, v Verdicts, now time.Time) {
	t.Helper()
	again := withStatus(t, req, resp.Status)
	second, _, err := cfg.Sync(again, v, now)
	require.NoError(t, err)
	if diff := cmp.Diff(string(indent(t, resp.Status)), string(indent(t, second.Status))); diff != "" {
		t.Fatalf("status fed back is not a fixpoint (-first +second):\n%s", diff)
	}
}

// scenarioWorkload is the workload as the step's state says Metacontroller
// observes it: current or previous, serving (every replica ready) or
// rolling (updated, none ready yet); nil when missing.
func scenarioWorkload(t *testing.T, state string, current, previous mcrequest.Object) mcrequest.Object {
	var w mcrequest.Object
	switch state {
	case "missing", "":
		return nil
	case "previous":
		require.NotNil(t, previous, "workload previous needs an earlier revision")
		w = mcrequest.Clone(previous)
	default:
		w = mcrequest.Clone(current)
	}
	replicas := int64(1)
	if r, ok := mcrequest.Map(w, "spec")["replicas"].(float64); ok {
		replicas = int64(r)
	}
	mcrequest.Meta(w)["generation"] = 1
	st := map[string]any{"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas}
	if state == "rolling" {
		st = map[string]any{"observedGeneration": 1, "replicas": replicas, "updatedReplicas": replicas}
	}
	w["status"] = st
	return w
}

// scenarioPodObject is pod name in namespace ns of workload w, made from
// spec revision rev, as the kubelet reports p: labelled as w's pod template
// (so the customize hook's rule relates it) and with p's workload revision
// hash.
func scenarioPodObject(ns, name, rev string, w mcrequest.Object, p scenarioPod) mcrequest.Object {
	phase := p.Phase
	if phase == "" {
		phase = "Running"
	}
	ready := "False"
	if p.Ready {
		ready = "True"
	}
	since := testNow.Add(time.Duration(p.ReadySince)).Format(time.RFC3339)
	container := json.RawMessage(fmt.Sprintf(`{"name":"app","image":"x","imageID":"","ready":%t,"restartCount":0,"started":true,"state":{"running":{"startedAt":%q}},"lastState":{}}`, p.Ready, testNow.Format(time.RFC3339)))
	if p.Container != nil {
		container = p.Container
	}
	label := schema.LabelPodTemplateHash
	if mcrequest.Str(w, "kind") == "StatefulSet" {
		label = schema.LabelControllerRevisionHash
	}
	labels := map[string]any{label: p.Hash}
	for k, v := range mcrequest.Lookup(mcrequest.PodTemplate(w), "metadata", "labels") {
		labels[k] = v
	}
	return mcrequest.Object{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": ns, "annotations": map[string]any{schema.AnnotationRevision: rev},
			"labels":            labels,
			"creationTimestamp": testNow.Add(time.Duration(p.Created)).Format(time.RFC3339)},
		"status": map[string]any{
			"phase": phase, "podIP": p.IP, "startTime": testNow.Format(time.RFC3339),
			"conditions":        []any{map[string]any{"type": "Ready", "status": ready, "lastTransitionTime": since}},
			"containerStatuses": []any{mcrequest.ToObject(container)},
		},
	}
}

func scenarioVerdict(t *testing.T, rawSpec json.RawMessage, v scenarioResult, podIP string) *portcheck.Result {
	var spec schema.Spec
	require.NoError(t, json.Unmarshal(rawSpec, &spec))
	ip := v.IP
	if ip == "" {
		ip = podIP
	}
	res := &portcheck.Result{IP: ip, CheckedAt: testNow.Add(time.Duration(v.CheckedAt)), Stale: v.Stale}
	for _, p := range spec.Ports {
		state, ok := v.Ports[p.Name]
		require.True(t, ok, "the verdict names every declared port: %s", p.Name)
		pr := portcheck.PortResult{Name: p.Name, Port: p.Port, State: portcheck.State(state)}
		switch pr.State {
		case portcheck.Closed:
			pr.Err = "connect: connection refused"
		case portcheck.Inconclusive:
			pr.Err = "i/o timeout"
		}
		res.Ports = append(res.Ports, pr)
	}
	return res
}

// dialsOf is "dial" or "forget+dial" for each job, sorted.
func dialsOf(jobs []DialJob) []string {
	var out []string
	for _, j := range jobs {
		if j.Forget {
			out = append(out, "forget+dial")
		} else {
			out = append(out, "dial")
		}
	}
	sort.Strings(out)
	return out
}

func summarize(t *testing.T, resp *metacontroller.SyncResponse, jobs []DialJob, rawParent []byte) summary {
	st := resp.Status.(schema.Status)
	var s summary
	for _, c := range st.Conditions {
		switch schema.ConditionType(c.Type) {
		case schema.CondAvailable:
			s.Available = string(c.Status) + " " + c.Reason
		case schema.CondConverged:
			s.Converged = string(c.Status)
		case schema.CondStalled:
			s.Stalled = string(c.Status)
			if c.Status == "True" {
				s.Stalled += " " + c.Reason
			}
		}
	}
	for _, d := range st.LastFailureDetails {
		e := string(d.Type) + " " + d.Reason
		if d.Port != 0 {
			e += fmt.Sprintf(" %d", d.Port)
		}
		s.Details = append(s.Details, e)
	}
	if pc := st.PortCheck; pc != nil {
		if pc.FailingSince != nil {
			s.PortCheck = pc.FailingSince.Sub(testNow).String()
		}
		if pc.CheckedAt != nil {
			s.CheckedAt = pc.CheckedAt.Sub(testNow).String()
		}
	}
	var ports []string
	for _, p := range st.Ports {
		ports = append(ports, p.Name+"="+string(p.State))
	}
	s.Ports = strings.Join(ports, " ")
	s.Dials = dialsOf(jobs)
	s.Resync = resp.ResyncAfterSeconds

	var p map[string]any
	require.NoError(t, json.Unmarshal(rawParent, &p))
	p["status"] = roundTrip(t, st)
	u := &unstructured.Unstructured{}
	require.NoError(t, u.UnmarshalJSON(mustJSON(t, p))) // integers as int64, as kstatus reads them
	res, err := kstatus.Compute(u)
	require.NoError(t, err)
	s.KStatus = res.Status.String()
	return s
}

func roundTrip(t testing.TB, v any) map[string]any {
	var m map[string]any
	require.NoError(t, json.Unmarshal(mustJSON(t, v), &m))
	return m
}

func mustJSON(t testing.TB, v any) json.RawMessage {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// mergePatch applies a JSON merge patch (RFC 7386) to obj.
func mergePatch(t testing.TB, obj map[string]any, patch json.RawMessage) map[string]any {
	var p any
	require.NoError(t, json.Unmarshal(patch, &p))
	out, _ := merge(roundTrip(t, obj), p).(map[string]any)
	require.NotNil(t, out, "a merge patch over an object must be an object")
	return out
}

func merge(dst, patch any) any {
	pm, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	dm, ok := dst.(map[string]any)
	if !ok {
		dm = map[string]any{}
	}
	for k, v := range pm {
		if v == nil {
			delete(dm, k)
			continue
		}
		dm[k] = merge(dm[k], v)
	}
	return dm
}

// requireFreshReplicaAgrees: N replicas answer like one. With the answer's
// status fed back, a replica whose verifier knows nothing (restarted, fresh,
// its cache evicted) answers the same conditions and port table as the warm
// replica that answered, now and at later times, or holds its answer when
// the warm one does, and schedules its own dial whenever the status holds a
// verdict that is not final.
func requireFreshReplicaAgrees(t *testing.T, cfg Config, req *metacontroller.SyncRequest, resp *metacontroller.SyncResponse, warm Verdicts, now time.Time) {
	t.Helper()
	again := withStatus(t, req, resp.Status)
	st := resp.Status.(schema.Status)
	for _, later := range []time.Duration{0, time.Second, cfg.withDefaults().VerdictRequeue, time.Hour, 400 * 24 * time.Hour} {
		at := now.Add(later)
		fresh, jobs, ferr := cfg.Sync(again, nil, at)
		want, werr := resp, error(nil)
		if later > 0 {
			want, _, werr = cfg.Sync(again, warm, at)
		}
		var fheld, wheld *HeldError
		errors.As(ferr, &fheld)
		errors.As(werr, &wheld)
		if fheld != nil || wheld != nil {
			require.Equal(t, wheld != nil, fheld != nil, "+%s: one replica holds its answer, the other not (warm: %v, fresh: %v)", later, werr, ferr)
			require.NotEmpty(t, jobs, "+%s: a held answer schedules no dial", later)
			continue
		}
		require.NoError(t, ferr)
		require.NoError(t, werr)
		if diff := cmp.Diff(gateView(want), gateView(fresh)); diff != "" {
			t.Fatalf("+%s: a replica without verdicts answers otherwise (-warm +fresh):\n%s", later, diff)
		}
		if holdsVerdict(st) && len(jobs) == 0 {
			t.Fatalf("+%s: a replica without verdicts schedules no dial of its own; status: %s", later, indent(t, st))
		}
	}
}

// gateView is what replicas must agree on: the conditions (status, reason,
// message, lastTransitionTime) and the port table.
func gateView(resp *metacontroller.SyncResponse) map[string]any {
	st := resp.Status.(schema.Status)
	return map[string]any{"conditions": st.Conditions, "ports": st.Ports}
}

// holdsVerdict reports whether st carries a port verdict that more dials may
// still change: some port was dialed, and the gate did not condemn.
func holdsVerdict(st schema.Status) bool {
	if c := find(st.Conditions, schema.CondStalled); c != nil && c.Status == "True" && c.Reason == string(schema.ReasonPortNotListening) {
		return false
	}
	if c := find(st.Conditions, schema.CondAvailable); c == nil || !verdictReasons[c.Reason] {
		return false
	}
	for _, p := range st.Ports {
		if p.State != schema.PortUnknown {
			return true
		}
	}
	return false
}
