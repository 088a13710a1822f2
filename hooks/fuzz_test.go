package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"github.com/stackdome/stackdome/schema"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/portcheck"
)

// The fuzz targets and TestBadInputClasses share one contract for anything a
// client can send (docs/bad-input.md): no panic, no 5xx, no hang; a 200 sync
// answer carries a children array and a status object; a 4xx answer is one
// short line. Metacontroller deletes what a 200 leaves out and copies a
// non-200 body into an event, so both halves matter.

// hangBound is far beyond any answer (they take microseconds) and far
// below Metacontroller's 10 s webhook timeout: it only catches a hang.
const hangBound = 5 * time.Second

// fuzzHandler is the real handler with a real verifier that is never run,
// so Enqueue fills its queue and then refuses, as under overload.
func fuzzHandler() *Handler {
	return &Handler{Verifier: portcheck.New(portcheck.Config{QueueSize: 64}), Now: func() time.Time { return testNow }}
}

func fuzzRouter(tb testing.TB) http.Handler {
	return Router(fuzzHandler(), func() bool { return true }, nil)
}

// viaSync is the answer Sync gives the request split by encoding/json
// (metacontroller.SyncRequest), encoded by json.Marshal: the handler's answer
// before it decoded bodies itself. It schedules nothing. A body the
// handler's decoding refuses (over budget, or not as Metacontroller sends
// one: a member given twice, named in another case, invalid UTF-8) has no
// answer of Sync's to compare with: it is answered by that refusal, and
// encoding/json must read every body the decoding reads.
func viaSync(h *Handler, body []byte) (int, string) {
	if err := h.Budget.Check(body); err != nil {
		var over *BudgetError
		if errors.As(err, &over) {
			return http.StatusRequestEntityTooLarge, oneLine(err.Error()) + "\n"
		}
		return http.StatusBadRequest, oneLine(err.Error()) + "\n"
	}
	var req metacontroller.SyncRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return http.StatusInternalServerError, "the handler reads a body encoding/json refuses: " + err.Error()
	}
	resp, _, err := h.Config.Sync(&req, h.Verifier, h.now())
	if err != nil {
		return statusOf(err), oneLine(err.Error()) + "\n"
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return http.StatusInternalServerError, err.Error()
	}
	return http.StatusOK, string(b)
}

// requireSameAsSync fails unless the router answers body exactly as Sync
// does (viaSync, computed first so that both read the same verifier state).
func requireSameAsSync(tb testing.TB, h *Handler, router http.Handler, body []byte) *httptest.ResponseRecorder {
	tb.Helper()
	code, want := viaSync(h, body)
	w := post(tb, router, "/sync", body)
	if w.Code != code || w.Body.String() != want {
		tb.Fatalf("the handler answers %d %.300q; Sync answers %d %.300q", w.Code, w.Body.String(), code, want)
	}
	return w
}

// TestFastPathIsSync: the handler's decoding (the walk and its Cache),
// children cache and encoding by parts give Sync's answer byte for byte, for
// every golden request (twice: built, then cached) and every bad input.
func TestFastPathIsSync(t *testing.T) {
	h := fuzzHandler()
	router := Router(h, nil, nil)
	for _, stem := range fixtures(t) {
		body := readFile(t, stem+".request.json")
		for range 2 {
			requireSameAsSync(t, h, router, body)
		}
	}
	for name, in := range badInputs(t) {
		t.Run(name, func(t *testing.T) { requireSameAsSync(t, h, router, in.body) })
	}
}

// post sends body to path and returns the answer, failing on a hang.
func post(tb testing.TB, router http.Handler, path string, body []byte) *httptest.ResponseRecorder {
	tb.Helper()
	w := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		router.ServeHTTP(w, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body)))
	}()
	select {
	case <-done:
	case <-time.After(hangBound):
		tb.Fatalf("POST %s did not answer within %s", path, hangBound)
	}
	return w
}

// checkAnswer enforces the contract on one answer to path.
func checkAnswer(tb testing.TB, path string, w *httptest.ResponseRecorder) {
	tb.Helper()
	body := w.Body.String()
	switch {
	case w.Code >= 500:
		tb.Fatalf("POST %s: %d for client input: %q", path, w.Code, body)
	case w.Code >= 400:
		if strings.Count(body, "\n") != 1 || !strings.HasSuffix(body, "\n") || len(body) > 600 {
			tb.Fatalf("POST %s: %d answer is not one short line: %q", path, w.Code, body)
		}
	case w.Code == http.StatusOK && path == "/sync":
		var resp struct {
			Status   json.RawMessage    `json:"status"`
			Children *[]json.RawMessage `json:"children"`
		}
		require.NoError(tb, json.Unmarshal(w.Body.Bytes(), &resp), body)
		if resp.Children == nil {
			tb.Fatalf("200 without a children array: %s", body)
		}
		if len(resp.Status) == 0 || resp.Status[0] != '{' {
			tb.Fatalf("200 without a status object: %s", body)
		}
		for _, c := range *resp.Children {
			var tm struct{ APIVersion, Kind string }
			require.NoError(tb, json.Unmarshal(c, &tm))
			if tm.APIVersion == "" || tm.Kind == "" {
				tb.Fatalf("child without apiVersion or kind (Metacontroller refuses it): %s", c)
			}
		}
	case w.Code == http.StatusOK && path == "/customize":
		var resp struct {
			RelatedResources []struct {
				APIVersion, Resource, Namespace string
				Names                           []string
				LabelSelector                   *struct{ MatchLabels map[string]string }
			}
		}
		require.NoError(tb, json.Unmarshal(w.Body.Bytes(), &resp), body)
		if n := len(resp.RelatedResources); n < 1 || n > 5 {
			tb.Fatalf("customize answer has %d rules, want the pods rule and at most the error-page Service's, the Middlewares', the ConfigMaps' and the Secrets': %s", n, body)
		}
		r := resp.RelatedResources[0]
		if r.APIVersion != "v1" || r.Resource != "pods" || r.LabelSelector == nil || r.LabelSelector.MatchLabels[schema.LabelInstance] == "" {
			tb.Fatalf("customize answer could select every pod of the namespace: %s", body)
		}
		for _, s := range resp.RelatedResources[1:] {
			switch {
			case s.APIVersion == "v1" && s.Resource == "services":
				if s.Namespace == "" || len(s.Names) != 1 || s.LabelSelector != nil {
					tb.Fatalf("customize answer relates more than the one error-page Service: %s", body)
				}
			case s.APIVersion == "traefik.io/v1alpha1" && s.Resource == "middlewares":
				// By name in the parent's namespace, never all of them, and
				// never one of stackdome's own (the spec is refused first).
				if s.Namespace != r.Namespace || len(s.Names) == 0 || s.LabelSelector != nil {
					tb.Fatalf("customize answer relates Middlewares beyond the spec's own: %s", body)
				}
				for _, n := range s.Names {
					for _, sfx := range schema.MiddlewareSuffixes() {
						if n == r.LabelSelector.MatchLabels[schema.LabelInstance]+sfx {
							tb.Fatalf("customize answer relates stackdome's own Middleware %s: %s", n, body)
						}
					}
				}
			case s.APIVersion == "v1" && (s.Resource == "configmaps" || s.Resource == "secrets"):
				// By name in the parent's namespace, never all of them: a
				// rule without names would relate every Secret.
				if s.Namespace != r.Namespace || len(s.Names) == 0 || s.LabelSelector != nil {
					tb.Fatalf("customize answer relates %s beyond the spec's own: %s", s.Resource, body)
				}
				for _, n := range s.Names {
					if n == "" {
						tb.Fatalf("customize answer relates %s without a name: %s", s.Resource, body)
					}
				}
			case s.APIVersion == "batch/v1" && s.Resource == "jobs":
				// A CronJob's runs: by the pods' selector, in the parent's
				// namespace, never by names.
				if s.Namespace != r.Namespace || s.LabelSelector == nil || len(s.Names) > 0 || !maps.Equal(s.LabelSelector.MatchLabels, r.LabelSelector.MatchLabels) {
					tb.Fatalf("customize answer relates Jobs beyond the CronJob's runs: %s", body)
				}
			default:
				tb.Fatalf("customize answer relates an unexpected kind: %s", body)
			}
		}
	case w.Code != http.StatusOK:
		tb.Fatalf("POST %s: unexpected %d: %q", path, w.Code, body)
	}
}

// badInput is one class of docs/bad-input.md that is not a golden request:
// the body, and the code and a fragment of the answer it gets.
type badInput struct {
	body   []byte
	code   int
	answer string
}

// minimal is a valid request body around spec with nothing observed.
func minimal(spec string) string {
	return `{"parent":{"kind":"StackResource","metadata":{"name":"t","namespace":"n"},"spec":` + spec + `}`
}

// badInputs are the bad-input classes, keyed by the name docs/bad-input.md
// gives them.
func badInputs(tb testing.TB) map[string]badInput {
	serving := readFile(tb, filepath.Join("..", "testdata", "sync", "serving.request.json"))
	valid := `{"type":"Service","image":"i"}`
	deep := func(n int) []byte {
		return []byte(minimal(valid) + `,"children":{"Service.v1":{"t":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}}`)
	}
	in := func(body string, code int, answer string) badInput { return badInput{[]byte(body), code, answer} }
	out := map[string]badInput{
		"malformed json":            in(`{"parent":`, 400, `decoding request: unexpected EOF within "/parent"`),
		"not an object":             in(`[1,2]`, 400, "decoding request: the body is a JSON array, not an object"),
		"empty body":                in(``, 400, "decoding request: unexpected end of JSON input"),
		"null body":                 in(`null`, 400, "decoding request: the body is a JSON null, not an object"),
		"trailing garbage":          {append(append([]byte{}, serving...), "}{"...), 400, "decoding request: data after the top-level value"},
		"missing parent":            in(`{"children":{}}`, 400, "request has no parent"),
		"parent wrong type":         in(`{"parent":"checkout"}`, 400, "decoding parent: field : cannot use a JSON string"),
		"parent without name":       in(`{"parent":{"kind":"StackResource","spec":{}}}`, 400, "parent has no metadata.name"),
		"parent of another kind":    in(`{"parent":{"kind":"Toy","metadata":{"name":"t"}}}`, 400, "parent is a Toy, not a StackResource"),
		"children wrong type":       in(minimal(valid)+`,"children":[]}`, 400, `decoding request: member "children" is a JSON array, not an object`),
		"group wrong type":          in(minimal(valid)+`,"children":{"Deployment.apps/v1":[]}}`, 400, `decoding request: children "Deployment.apps/v1" is a JSON array, not an object`),
		"pod wrong type":            {bytes.Replace(serving, []byte(`"podIP": "127.0.0.81"`), []byte(`"podIP": 81`), 1), 400, `decoding related pod "shop/checkout-5d9c7b8f6-abcde"`},
		"workload wrong type":       {bytes.Replace(serving, []byte(`"readyReplicas": 2`), []byte(`"readyReplicas": "2"`), 1), 400, `decoding observed Deployment.apps/v1 "checkout"`},
		"finalizing wrong type":     in(minimal(valid)+`,"finalizing":"yes"}`, 400, `decoding request: member "finalizing": a JSON string, not a bool`),
		"generation out of range":   in(`{"parent":{"kind":"StackResource","metadata":{"name":"t","generation":1e400},"spec":`+valid+`}}`, 400, "metadata.generation: cannot use a JSON number 1e400"),
		"invalid utf-8":             in("{\"parent\":{\"kind\":\"StackResource\",\"metadata\":{\"name\":\"t\xff\"},\"spec\":{\"type\":\"Service\",\"image\":\"i\xfe\"}}}", 400, `decoding request: invalid UTF-8 within "/parent/metadata/name"`),
		"deep nesting 10000":        {deep(10000), 400, "exceeded max depth"},
		"deep nesting 9990":         {deep(9990), 200, `"children":[{`},
		"duplicate parent":          in(minimal(valid)+`,"parent":{"kind":"StackResource"}}`, 400, `decoding request: duplicate object member name "parent"`),
		"duplicate spec key":        in(minimal(`{"type":"Service","image":"i","type":"Bogus"}`)+`}`, 400, `decoding request: duplicate object member name "type" within "/parent/spec"`),
		"member in another case":    in(`{"Parent":{"kind":"StackResource","metadata":{"name":"t"},"spec":`+valid+`}}`, 400, `decoding request: member "Parent": Metacontroller names it "parent"`),
		"child key in two cases":    in(minimal(valid)+`,"children":{"Deployment.apps/v1":{"t":{"kind":"Deployment","Kind":"Deployment"}}}}`, 400, `decoding observed Deployment.apps/v1 "t": jsontext: duplicate object member name "Kind"`),
		"spec key in two cases":     in(minimal(`{"type":"Service","image":"i","Type":"Bogus"}`)+`}`, 200, `invalid spec: duplicate object member name \"Type\"`),
		"unknown group key":         in(minimal(valid)+`,"children":{"Foo.example.io/v1":{"t":{"apiVersion":"example.io/v1","kind":"Foo","metadata":{"name":"t"}}}}}`, 200, `"kind":"Deployment"`),
		"negative replicas":         in(minimal(`{"type":"Service","image":"i","replicas":-1}`)+`}`, 200, "spec.replicas: Invalid value: -1: must be greater than or equal to 0"),
		"replicas overflow":         in(minimal(`{"type":"Service","image":"i","replicas":4294967296}`)+`}`, 200, "field replicas: cannot use a JSON number 4294967296 as int32"),
		"spec wrong type":           in(minimal(`"Service"`)+`}`, 200, "cannot use a JSON string as schema.Spec"),
		"name not a DNS label":      in(`{"parent":{"kind":"StackResource","metadata":{"name":"my.app"},"spec":`+valid+`}}`, 200, `metadata.name: Invalid value: \"my.app\"`),
		"spec missing":              in(`{"parent":{"kind":"StackResource","metadata":{"name":"t"}}}`, 200, "spec is missing"),
		"bad quantity":              in(minimal(`{"type":"StatefulService","image":"i","storage":{"size":"lots","mountPath":"/d"}}`)+`}`, 200, "quantities must match"),
		"every spec rule broken":    in(minimal(`{"type":"Lambda","image":" ","ports":[{"name":"HTTP_1","port":0,"public":true},{"name":"HTTP_1","port":0}],"host":"-x-","storage":{"size":"0","mountPath":"d"}}`)+`}`, 200, `spec.image: Invalid value: \" \": an image is required`),
		"port-only fields on a Job": in(minimal(`{"type":"Job","image":"i","ports":[{"name":"http","port":80}],"host":"a.example.com"}`)+`}`, 200, "spec.ports: Forbidden: type Job runs to completion and serves nothing"),
		"unparsable schedule":       in(minimal(`{"type":"CronJob","image":"i","cronJob":{"schedule":"0 26 * * *"}}`)+`}`, 200, "the CronJob controller cannot parse it: end of range (26) above maximum (23)"),
		"invalid spec, unkeepable":  in(minimal(`{"type":"Service"}`)+`,"children":{"Deployment.apps/v1":{"t":{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"t"}}}}}`, 422, "cannot be kept"),
	}
	maps.Copy(out, keptInputs(tb))
	return out
}

// keptInputs are the bad-input classes of an invalid spec whose running
// children cannot be rebuilt from what they carry (#25): made from the
// golden invalid-spec-running request, whose children are all keepable.
func keptInputs(tb testing.TB) map[string]badInput {
	return map[string]badInput{
		// #25: an annotation is kept only as the observed child's own, whole.
		"invalid spec, annotation names another child": {tamperLastApplied(tb, "invalid-spec-running", "Deployment.apps/v1", func(la string) string {
			return strings.Replace(la, `"name":"billing","namespace"`, `"name":"other","namespace"`, 1)
		}), 422, `last-applied-configuration names apps/v1/Deployment other, not the observed apps/v1/Deployment billing`},
		"invalid spec, annotation of another kind": {tamperLastApplied(tb, "invalid-spec-running", "Deployment.apps/v1", func(la string) string {
			return strings.Replace(la, `"kind":"Deployment"`, `"kind":"StatefulSet"`, 1)
		}), 422, `names apps/v1/StatefulSet billing, not the observed apps/v1/Deployment billing`},
		"invalid spec, annotation of another namespace": {tamperLastApplied(tb, "invalid-spec-running", "Deployment.apps/v1", func(la string) string {
			return strings.Replace(la, `"namespace":"finance"`, `"namespace":"payroll"`, 1)
		}), 422, `names namespace payroll, not the observed "finance"`},
		"invalid spec, data after the annotation": {tamperLastApplied(tb, "invalid-spec-running", "Deployment.apps/v1", func(la string) string {
			return la + `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"other"}}`
		}), 422, `data after the JSON object`},
		// #25: under server-side apply no child carries the annotation.
		"invalid spec, server-side applied": {serverSideApplied(tb, "invalid-spec-running"), 422, `has no metacontroller.k8s.io/last-applied-configuration annotation to rebuild it from (Metacontroller's --apply-strategy=server-side-apply writes none)`},
	}
}

// tamperLastApplied is the golden request fixture with the last-applied
// annotation of every observed child of group rewritten by edit.
func tamperLastApplied(tb testing.TB, fixture, group string, edit func(string) string) []byte {
	tb.Helper()
	return editChildren(tb, fixture, func(g string, obj map[string]any) {
		if g != group {
			return
		}
		ann := obj["metadata"].(map[string]any)["annotations"].(map[string]any)
		la := ann[observed.AnnotationLastApplied].(string)
		ann[observed.AnnotationLastApplied] = edit(la)
		require.NotEqual(tb, la, ann[observed.AnnotationLastApplied], "the edit changes nothing in %s's %s", fixture, group)
	})
}

// serverSideApplied is the golden request fixture as Metacontroller's
// --apply-strategy=server-side-apply leaves the children: no last-applied
// annotation (it strips it), fields owned by an Apply of manager
// metacontroller.
func serverSideApplied(tb testing.TB, fixture string) []byte {
	tb.Helper()
	return editChildren(tb, fixture, func(_ string, obj map[string]any) {
		meta := obj["metadata"].(map[string]any)
		delete(meta["annotations"].(map[string]any), observed.AnnotationLastApplied)
		for _, mf := range meta["managedFields"].([]any) {
			if mf := mf.(map[string]any); mf["manager"] == "metacontroller" {
				mf["operation"] = "Apply"
			}
		}
	})
}

// editChildren is the golden request fixture with edit applied to every
// observed child.
func editChildren(tb testing.TB, fixture string, edit func(group string, obj map[string]any)) []byte {
	tb.Helper()
	var req map[string]any
	require.NoError(tb, json.Unmarshal(readFile(tb, filepath.Join("..", "testdata", "sync", fixture+".request.json")), &req))
	n := 0
	for g, objs := range req["children"].(map[string]any) {
		for _, o := range objs.(map[string]any) {
			edit(g, o.(map[string]any))
			n++
		}
	}
	require.NotZero(tb, n, "%s observes no child", fixture)
	b, err := json.Marshal(req)
	require.NoError(tb, err)
	return b
}

func readFile(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	require.NoError(tb, err)
	return b
}

// seedSync adds every golden request and every bad input.
func seedSync(f *testing.F) {
	for _, stem := range fixtures(f) {
		f.Add(readFile(f, stem+".request.json"))
	}
	for _, b := range badInputs(f) {
		f.Add(b.body)
	}
	for _, o := range oddShapes(f) {
		f.Add(o.body)
	}
}

// oddShape is a golden request with a pod's or workload's conditions or
// statuses in a shape the state table does not expect, and the golden
// request it was made from.
type oddShape struct {
	body, from []byte
}

// oddShapes are the golden requests of the rows that read pod and workload
// conditions, each bent out of the shape those rows expect: unknown
// statuses, missing reasons and messages, unknown types, other policies.
func oddShapes(tb testing.TB) map[string]oddShape {
	out := map[string]oddShape{}
	bend := func(name, fixture string, pairs ...string) {
		from := readFile(tb, filepath.Join("..", "testdata", "sync", fixture+".request.json"))
		body := from
		for i := 0; i < len(pairs); i += 2 {
			next := bytes.ReplaceAll(body, []byte(pairs[i]), []byte(pairs[i+1]))
			if bytes.Equal(body, next) {
				tb.Fatalf("%s: %q is not in %s", name, pairs[i], fixture)
			}
			body = next
		}
		out[name] = oddShape{body: body, from: from}
	}
	bend("PodScheduled Unknown", "unschedulable", `"status": "False",
       "type": "PodScheduled"`, `"status": "Unknown",
       "type": "PodScheduled"`)
	bend("Unschedulable without message or time", "unschedulable", `"message": "0/3 nodes`, `"x-message": "0/3 nodes`, `"lastTransitionTime": "2026-11-29T11:40:00Z",
       "x-message"`, `"x-message"`)
	bend("PodScheduled gated", "unschedulable", `"reason": "Unschedulable"`, `"reason": "SchedulingGated"`)
	bend("pod phase unknown", "unschedulable", `"phase": "Pending"`, `"phase": "Unknown"`)
	bend("ReplicaFailure False", "create-failed", `"status": "True",
       "type": "ReplicaFailure"`, `"status": "False",
       "type": "ReplicaFailure"`)
	bend("ReplicaFailure without reason or message", "create-failed", `"reason": "FailedCreate",`, ``, `"message": "pods \"exporter`, `"x": "pods \"exporter`)
	bend("condition of an unknown type", "create-failed", `"type": "ReplicaFailure"`, `"type": "ReplicaFailureV2"`)
	bend("StatefulSet without currentRevision", "rollout-blocked", `"currentRevision": "zk-7c8d9f6b5"`, `"currentRevision": ""`)
	bend("StatefulSet Parallel", "rollout-blocked", `"podManagementPolicy": "OrderedReady"`, `"podManagementPolicy": "Parallel"`)
	bend("pod without revision label", "rollout-blocked", `"controller-revision-hash": "zk-7c8d9f6b5"`, `"x-hash": "zk-7c8d9f6b5"`)
	bend("Ready condition Unknown", "rollout-blocked", `"status": "False",
       "type": "Ready"`, `"status": "Unknown",
       "type": "Ready"`)
	bend("claim template without size", "storage-not-applied", `"storage": "20Gi"`, `"storage-x": "20Gi"`)
	bend("claim template of another name", "storage-not-applied", `"metadata": {
        "name": "data"`, `"metadata": {
        "name": "pgdata"`)
	bend("container state empty", "crash-looping", `"state": {
        "waiting": {`, `"state": {}, "x": {
        "waiting": {`)
	return out
}

// TestOddShapesChangeNothingElse: a pod or workload whose conditions or
// statuses have a shape the rows do not expect is answered 200 like any
// other, by the same code path as Sync, and changes nothing but the status:
// the children are those of the request it was bent from (only a claim
// template that differs from the spec's is kept as observed).
func TestOddShapesChangeNothingElse(t *testing.T) {
	h := fuzzHandler()
	router := Router(h, nil, nil)
	for name, o := range oddShapes(t) {
		t.Run(name, func(t *testing.T) {
			w := requireSameAsSync(t, h, router, o.body)
			checkAnswer(t, "/sync", w)
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			if strings.HasPrefix(name, "claim template") {
				return
			}
			was := requireSameAsSync(t, h, router, o.from)
			var got, want struct {
				Children json.RawMessage `json:"children"`
				Status   struct {
					Conditions []json.RawMessage `json:"conditions"`
				} `json:"status"`
			}
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &got))
			require.NoError(t, json.Unmarshal(was.Body.Bytes(), &want))
			require.JSONEq(t, string(want.Children), string(got.Children))
			require.Len(t, got.Status.Conditions, 4)
		})
	}
}

// FuzzSync posts arbitrary bodies to /sync through the router: the answer
// keeps the contract and is exactly Sync's.
func FuzzSync(f *testing.F) {
	seedSync(f)
	h := fuzzHandler()
	router := Router(h, nil, nil)
	f.Fuzz(func(t *testing.T, body []byte) {
		w := requireSameAsSync(t, h, router, body)
		checkAnswer(t, "/sync", w)
		requireKeepsRunning(t, h, body, w)
	})
}

// FuzzSyncSpec puts arbitrary bytes where the parent's spec goes in a real
// request whose observed children all carry their last-applied annotation:
// whatever the spec says, any well-formed request must then be answered 200
// — a bad spec is reported in status and the running children are kept.
func FuzzSyncSpec(f *testing.F) {
	tmpl := specTemplate(f)
	for _, stem := range fixtures(f) {
		var req struct {
			Parent struct {
				Spec json.RawMessage `json:"spec"`
			} `json:"parent"`
		}
		require.NoError(f, json.Unmarshal(readFile(f, stem+".request.json"), &req))
		f.Add([]byte(req.Parent.Spec))
	}
	for _, s := range []string{`null`, `5`, `"Service"`, `[]`, `{}`, `{"type":"Service"}`, `{"type":"Service","image":"i","ports":[{"name":"http","port":0}]}`,
		`{"type":"Service","image":"i","ports":[{"name":"a","port":1,"public":true}]}`, `{"type":"StatefulService","image":"i","storage":{"size":"1Gi","mountPath":"/d"}}`,
		`{"type":"Service","image":"i","replicas":1e3}`, `{"type":"Service","image":"i","resources":{"limits":{"cpu":"1e9999"}}}`,
		`{"type":"Service","image":"i","healthChecks":{"readiness":{"httpGet":{"port":"http"}}}}`,
		// The fields of a real app, each slipped past admission wrong:
		// InvalidSpec, the children kept as last applied.
		`{"type":"Service","image":"i","replicas":2,"autoscaling":{"maxReplicas":3}}`, `{"type":"Service","image":"i","autoscaling":{"maxReplicas":0}}`,
		`{"type":"Service","image":"i","tls":{"secretName":"a","certResolver":"b"}}`, `{"type":"Service","image":"i","tls":{}}`,
		`{"type":"Service","image":"i","host":"h","ports":[{"name":"a","port":1,"public":true,"path":"/x"},{"name":"b","port":2,"public":true,"path":"/x"}]}`,
		`{"type":"Service","image":"i","files":[{"name":"x","mountPath":"/x"}]}`, `{"type":"Service","image":"i","files":[{"name":"x","mountPath":"x","configMap":{"name":"c"}}]}`,
		`{"type":"Service","image":"i","podLabels":{"app.kubernetes.io/instance":"other"}}`, `{"type":"Service","image":"i","podAnnotations":{"stackdome.io/revision":"x"}}`,
		`{"type":"Service","image":"i","serviceAccountName":"Bad_Name","imagePullSecrets":[{}]}`, `{"type":"Service","image":"i","nodeSelector":{"k":"v v"}}`,
		`{"type":"Service","image":"i","tolerations":[{"operator":"Maybe"}]}`, `{"type":"Service","image":"i","topologySpreadConstraints":[{"maxSkew":0}]}`,
		`{"type":"Service","image":"i","podSecurityContext":{"runAsUser":"root"}}`, `{"type":"Service","image":"i","securityContext":{"capabilities":{"add":["ALL"]}}}`,
		`{"type":"Service","image":"i","affinity":{"nodeAffinity":{}},"envFrom":[{}]}`,
		// #20: scratch, shm and the migration slipped past admission wrong.
		`{"type":"Service","image":"i","scratch":[{"name":"tmp","mountPath":"/tmp","sizeLimit":"0"},{"name":"tmp","mountPath":"/tmp"}]}`,
		`{"type":"Service","image":"i","scratch":[{"name":"x","mountPath":"/dev/shm","sizeLimit":"1Gi"}],"shm":{"sizeLimit":"-1Mi"}}`,
		`{"type":"Service","image":"i","scratch":"tmp","shm":true}`, `{"type":"Service","image":"i","migration":{}}`,
		`{"type":"Service","image":"i","migration":{"command":"migrate"}}`,
		`{"type":"Service","image":"i","ports":[{"name":"a","port":1}],"terminationGracePeriodSeconds":3}`, `{"type":"Service","image":"i","drainSeconds":-5}`,
		`{"type":"Service","image":"i","drainSeconds":"ten","terminationGracePeriodSeconds":[]}`,
		`{"type":"Service","image":"i","replicas":3,"scratch":[{"name":"tmp","mountPath":"/tmp","sizeLimit":"64Mi"}],"shm":{"sizeLimit":"1Gi"},"migration":{"args":["migrate"]}}`,
		// #20: config follows slipped past admission wrong, and right.
		`{"type":"Service","image":"i","envFrom":[{"configMapRef":{"name":""}},{"secretRef":{"name":"s"},"configMapRef":{"name":"c"}}]}`,
		`{"type":"Service","image":"i","env":[{"name":"A","value":"v","rollOnChange":false},{"name":"B","valueFrom":{"configMapKeyRef":{"name":"c"}}}]}`,
		`{"type":"Service","image":"i","envFrom":[{"configMapRef":{"name":"c"},"rollOnChange":"false"}]}`, `{"type":"Service","image":"i","podAnnotations":{"stackdome.io/config-digest":"x"}}`,
		`{"type":"Service","image":"i","files":[{"name":"a","mountPath":"/a","secret":{"secretName":"s","optional":true},"rollOnChange":false}],"envFrom":[{"secretRef":{"name":"s"}}]}`} {
		f.Add([]byte(s))
	}
	h := fuzzHandler()
	router := Router(h, nil, nil)
	f.Fuzz(func(t *testing.T, spec []byte) {
		body := bytes.Replace(tmpl, []byte(`"@SPEC@"`), spec, 1)
		w := requireSameAsSync(t, h, router, body)
		checkAnswer(t, "/sync", w)
		requireKeepsRunning(t, h, body, w)
		if json.Valid(body) && w.Code != http.StatusOK {
			t.Fatalf("a well-formed request with spec %q got %d: %s", spec, w.Code, w.Body)
		}
	})
}

// specTemplate is the serving request with its spec replaced by "@SPEC@".
func specTemplate(tb testing.TB) []byte {
	var req map[string]any
	require.NoError(tb, json.Unmarshal(readFile(tb, filepath.Join("..", "testdata", "sync", "serving.request.json")), &req))
	req["parent"].(map[string]any)["spec"] = "@SPEC@"
	b, err := json.Marshal(req)
	require.NoError(tb, err)
	return b
}

// FuzzCustomize posts arbitrary bodies to /customize through the router.
func FuzzCustomize(f *testing.F) {
	seedSync(f)
	f.Add([]byte(`{"controller":{},"parent":{"apiVersion":"stackdome.io/v1alpha1","kind":"StackResource","metadata":{"name":"a","namespace":"n"}}}`))
	router := fuzzRouter(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		checkAnswer(t, "/customize", post(t, router, "/customize", body))
	})
}

// TestBadInputClasses is the table of docs/bad-input.md: each class of bad
// input gets its code and answer, and keeps the contract. A 200 for an
// unknown group key returns no child of that group: stackdome only ever
// returns its own kinds (Metacontroller only sends the groups of the
// CompositeController's childResources, and would create, never adopt, a
// returned kind it does not watch).
func TestBadInputClasses(t *testing.T) {
	router := fuzzRouter(t)
	for name, in := range badInputs(t) {
		t.Run(name, func(t *testing.T) {
			w := post(t, router, "/sync", in.body)
			require.Equal(t, in.code, w.Code, w.Body.String())
			require.Contains(t, w.Body.String(), in.answer)
			checkAnswer(t, "/sync", w)
			require.NotContains(t, w.Body.String(), `"kind":"Foo"`)
		})
	}
	for name, tc := range map[string]struct {
		body   string
		code   int
		answer string
	}{
		"malformed json":    {`{`, 400, "decoding request"},
		"missing parent":    {`{}`, 400, "request has no parent"},
		"parent wrong type": {`{"parent":[]}`, 400, "decoding parent"},
		"another kind":      {`{"parent":{"kind":"Toy","metadata":{"name":"t"}}}`, 400, "not a StackResource"},
		"invalid spec":      {minimal(`{"type":"Lambda"}`) + `}`, 200, `"matchLabels":{"app.kubernetes.io/instance":"t"`},
	} {
		t.Run("customize "+name, func(t *testing.T) {
			w := post(t, router, "/customize", []byte(tc.body))
			require.Equal(t, tc.code, w.Code, w.Body.String())
			require.Contains(t, w.Body.String(), tc.answer)
			checkAnswer(t, "/customize", w)
		})
	}
}

// requireKeepsRunning enforces the property the whole design leans on
// (Metacontroller deletes what a 200 leaves out): a 200 answer to body
// drops an observed workload or Service only when the request's own spec
// asks for it to go — the spec is valid, and the same request with nothing
// observed does not return it either. An invalid spec drops nothing: its
// children are rebuilt from what was last applied, or the answer is a 4xx.
func requireKeepsRunning(tb testing.TB, h *Handler, body []byte, w *httptest.ResponseRecorder) {
	tb.Helper()
	gone := dropped(tb, body, w)
	if len(gone) == 0 {
		return
	}
	if strings.Contains(w.Body.String(), `"reason":"`+string(schema.ReasonInvalidSpec)+`"`) {
		tb.Fatalf("a 200 for an invalid spec drops %q (Metacontroller deletes them): %.600s", gone, w.Body.String())
	}
	var req map[string]json.RawMessage
	require.NoError(tb, json.Unmarshal(body, &req))
	req["children"] = json.RawMessage(`{}`)
	bare, err := json.Marshal(req)
	require.NoError(tb, err)
	code, fresh := viaSync(h, bare)
	if code != http.StatusOK {
		tb.Fatalf("a 200 drops %q, and the same spec with nothing observed gets %d %.300s", gone, code, fresh)
	}
	asked := dropped(tb, body, &httptest.ResponseRecorder{Code: code, Body: bytes.NewBufferString(fresh)})
	for _, g := range gone {
		if !slices.Contains(asked, g) {
			tb.Fatalf("a 200 drops the observed %s, which the spec asks for (returned when nothing is observed): %.600s", g, w.Body.String())
		}
	}
}

// keptGroups are the observed children whose deletion takes an app down:
// its workload and its Services.
var keptGroups = []string{"Deployment.apps/v1", "StatefulSet.apps/v1", "Service.v1"}

// dropped lists the observed workloads and Services of the request body
// that a 200 answer w leaves out of its children, as "Kind.apiVersion
// name": Metacontroller deletes each one (what is not returned is deleted).
// A body that is not a request, or an answer that is not a 200, drops
// nothing.
func dropped(tb testing.TB, body []byte, w *httptest.ResponseRecorder) []string {
	tb.Helper()
	if w.Code != http.StatusOK {
		return nil
	}
	var req struct {
		Children map[string]map[string]struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"children"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil // answered 200 only if another reading decodes it: nothing observed we can name
	}
	var resp struct {
		Children []struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"children"`
	}
	require.NoError(tb, json.Unmarshal(w.Body.Bytes(), &resp))
	returned := map[string]bool{}
	for _, c := range resp.Children {
		returned[c.Kind+"."+c.APIVersion+" "+c.Metadata.Name] = true
	}
	var out []string
	for _, g := range keptGroups {
		for _, o := range req.Children[g] {
			if id := g + " " + o.Metadata.Name; !returned[id] {
				out = append(out, id)
			}
		}
	}
	return out
}
