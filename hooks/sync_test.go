package hooks

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/internal/mcrequest"
	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/portcheck"
	"github.com/stackdome/stackdome/schema"
)

var update = flag.Bool("update", false, "rewrite testdata/sync/*.response.json from the current code")

// testNow is the clock of every fixture.
var testNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

// fixtures returns the stems of testdata/sync/*.request.json.
func fixtures(t testing.TB) []string {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "sync", "*.request.json"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(paths), 12, "the wire contract has at least 12 cases")
	var stems []string
	for _, p := range paths {
		stems = append(stems, strings.TrimSuffix(p, ".request.json"))
	}
	return stems
}

func readRequest(t testing.TB, stem string) *metacontroller.SyncRequest {
	b, err := os.ReadFile(stem + ".request.json")
	require.NoError(t, err)
	var req metacontroller.SyncRequest
	require.NoError(t, json.Unmarshal(b, &req))
	return &req
}

func indent(t testing.TB, v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	return append(b, '\n')
}

// TestSync is the wire contract: every request gets exactly its golden
// response. `go test ./hooks -update` rewrites the responses.
func TestSync(t *testing.T) {
	for _, stem := range fixtures(t) {
		t.Run(filepath.Base(stem), func(t *testing.T) {
			resp, _, err := Sync(readRequest(t, stem), nil, testNow)
			require.NoError(t, err)
			got := indent(t, resp)
			golden(t, stem+".response.json", got, *update, "run go test ./hooks -update")
		})
	}
}

// TestSyncDoesNotDependOnTheDay: each fixture's parent already holds the
// status stackdome converges to, so the golden answer is what a live server
// gives at any later time — what lets the README curl a fixture. The one
// clock a fixture may show is the settle time of children it returns and
// does not observe (a first sync): later, the same answer says they were
// not created, and nothing else changes.
func TestSyncDoesNotDependOnTheDay(t *testing.T) {
	for _, stem := range fixtures(t) {
		t.Run(filepath.Base(stem), func(t *testing.T) {
			req := readRequest(t, stem)
			a, _, err := Sync(req, nil, testNow)
			require.NoError(t, err)
			later := testNow.Add(400 * 24 * time.Hour)
			b, _, err := Sync(req, nil, later)
			require.NoError(t, err)
			if st := a.Status.(schema.Status); st.ChildrenMissingSince != nil && newParentIn(t, req) {
				// A new parent's first sync has no earlier clock to keep: its
				// status is stamped with the answer's own now, all of it.
				bst := b.Status.(schema.Status)
				require.True(t, bst.ChildrenMissingSince.Time.Equal(later))
				bst.ChildrenMissingSince = st.ChildrenMissingSince
				bst.Conditions = slices.Clone(bst.Conditions)
				for i := range bst.Conditions {
					require.True(t, bst.Conditions[i].LastTransitionTime.Time.Equal(later), "%s", bst.Conditions[i].Type)
					bst.Conditions[i].LastTransitionTime = st.Conditions[i].LastTransitionTime
				}
				b.Status = bst
			} else if st.ChildrenMissingSince != nil {
				later := b.Status.(schema.Status)
				for _, typ := range []schema.ConditionType{schema.CondConverged, schema.CondStalled} {
					c := find(later.Conditions, typ)
					require.NotNil(t, c)
					require.Equal(t, string(schema.ReasonChildNotCreated), c.Reason, "%s 400 days after children went missing", typ)
				}
				require.Equal(t, metav1.ConditionTrue, find(later.Conditions, schema.CondStalled).Status)
				require.Zero(t, b.ResyncAfterSeconds, "past the settle time nothing is waited for")
				copy(later.Conditions, st.Conditions[:4])
				b.Status, b.ResyncAfterSeconds = later, a.ResyncAfterSeconds
			}
			if diff := cmp.Diff(string(indent(t, a)), string(indent(t, b))); diff != "" {
				t.Errorf("the answer changes with the clock (-now +later):\n%s", diff)
			}
		})
	}
}

// newParentIn says the request's parent carries no status: a new parent.
func newParentIn(t *testing.T, req *metacontroller.SyncRequest) bool {
	var p struct{ Status map[string]any }
	require.NoError(t, json.Unmarshal(req.Parent, &p))
	return len(p.Status) == 0
}

// TestSyncStatusIsAFixpoint feeds the returned status back as the parent's
// status: the same status must come out, or Metacontroller would write status
// on every sync and each write would trigger another sync.
func TestSyncStatusIsAFixpoint(t *testing.T) {
	for _, stem := range fixtures(t) {
		t.Run(filepath.Base(stem), func(t *testing.T) {
			req := readRequest(t, stem)
			first, _, err := Sync(req, nil, testNow)
			require.NoError(t, err)
			requireFixpoint(t, req, first, nil, testNow.Add(time.Second))
		})
	}
}

// requireFixpoint syncs again with resp's status fed back as the parent's,
// at later, and fails unless the status is the same.
func requireFixpoint(t *testing.T, req *metacontroller.SyncRequest, resp *metacontroller.SyncResponse, v Verdicts, later time.Time) {
	t.Helper()
	second, _, err := Sync(withStatus(t, req, resp.Status), v, later)
	require.NoError(t, err)
	if diff := cmp.Diff(string(indent(t, resp.Status)), string(indent(t, second.Status))); diff != "" {
		t.Errorf("status fed back is not a fixpoint (-first +second):\n%s", diff)
	}
}

// TestChildrenAreMinimal: no child carries what Metacontroller's 3-way
// merge would fight over forever — null, {}, [], status, server-set
// metadata, ownerReferences.
func TestChildrenAreMinimal(t *testing.T) {
	for _, stem := range fixtures(t) {
		t.Run(filepath.Base(stem), func(t *testing.T) {
			resp, _, err := Sync(readRequest(t, stem), nil, testNow)
			require.NoError(t, err)
			for _, c := range resp.Children {
				b := mustJSON(t, c)
				m := mcrequest.ToObject(b)
				name := mcrequest.KindName(m)
				require.NotContains(t, m, "status", name)
				md := mcrequest.Lookup(m, "metadata")
				for _, k := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "ownerReferences", "selfLink", "deletionTimestamp"} {
					require.NotContains(t, md, k, name)
				}
				if ann, ok := md["annotations"].(map[string]any); ok {
					require.NotContains(t, ann, observed.AnnotationLastApplied, name)
				}
				if path := emptyPath(m, name); path != "" {
					t.Errorf("%s holds a null or empty value", path)
				}
				require.False(t, bytes.Contains(b, []byte("null")), "%s: %s", name, b)
			}
		})
	}
}

// emptyPath returns the path of the first null, {} or [] in v, or "".
func emptyPath(v any, path string) string {
	switch t := v.(type) {
	case nil:
		return path
	case map[string]any:
		if len(t) == 0 {
			return path
		}
		for k, e := range t {
			if p := emptyPath(e, path+"."+k); p != "" {
				return p
			}
		}
	case []any:
		if len(t) == 0 {
			return path
		}
		for i, e := range t {
			if p := emptyPath(e, path+"["+itoa(int32(i))+"]"); p != "" {
				return p
			}
		}
	}
	return ""
}

// TestNoErrorServiceMakesNoMiddleware holds --error-service-name= (chart
// errorPages.enabled=false): no route refers to an errors Middleware, the
// customize hook relates nothing but pods, and a resource that had the wiring
// gives it up without a moment where its route refers to nothing (the
// Middleware goes once the route no longer uses it: TestWiringChildren).
func TestNoErrorServiceMakesNoMiddleware(t *testing.T) {
	cfg := Config{NoErrorService: true}
	for _, stem := range []string{"serving", "public-after-private", "error-pages-uninstalled"} {
		req := readRequest(t, filepath.Join("..", "testdata", "sync", stem))
		resp, _, err := cfg.Sync(req, nil, testNow)
		require.NoError(t, err)
		b, err := json.Marshal(resp.Children)
		require.NoError(t, err)
		require.NotContains(t, string(b), `"middlewares"`, stem)
		require.Contains(t, string(b), "IngressRoute", stem)
		if stem == "public-after-private" { // nothing observed: nothing to keep
			require.NotContains(t, string(b), "Middleware", stem)
			require.NotContains(t, string(b), "EndpointSlice", stem)
		}
	}
	body, err := os.ReadFile(filepath.Join("..", "testdata", "sync", "serving.request.json"))
	require.NoError(t, err)
	var creq metacontroller.CustomizeRequest
	require.NoError(t, json.Unmarshal(body, &creq))
	cresp, err := cfg.Customize(&creq)
	require.NoError(t, err)
	require.Len(t, cresp.RelatedResources, 1)
	require.Equal(t, "pods", cresp.RelatedResources[0].Resource)
}

// fixtureVerdicts is a verifier that holds, for every key, the verdict
// state on every declared port of the request's pod that a sync would dial:
// what a warm replica holds once its dials landed.
type fixtureVerdicts struct {
	ip    string
	ports []portcheck.Port
	state portcheck.State
	at    time.Time
}

func (v fixtureVerdicts) Get(portcheck.Key) (portcheck.Result, bool) {
	res := portcheck.Result{IP: v.ip, CheckedAt: v.at}
	for _, p := range v.ports {
		pr := portcheck.PortResult{Name: p.Name, Port: p.Port, State: v.state}
		if v.state == portcheck.Closed {
			pr.Err = "dial tcp " + v.ip + ":" + itoa(p.Port) + ": connect: connection refused"
		}
		res.Ports = append(res.Ports, pr)
	}
	return res, true
}
func (fixtureVerdicts) Pending(portcheck.Key) bool { return false }

// TestReplicasAnswerAlike is the property that makes N replicas answer like
// one: for every golden request, answered by a replica that knows nothing, by
// one whose verdict says every port is open and by one whose verdict says
// every port refused, the answer's status fed back to a replica that knows
// nothing (restarted, fresh, its cache evicted) gives the same conditions
// and port table as the warm replica gives at that time, now and later, and
// that replica schedules its own dial.
func TestReplicasAnswerAlike(t *testing.T) {
	for _, stem := range fixtures(t) {
		req := readRequest(t, stem)
		_, jobs, err := Sync(req, nil, testNow)
		require.NoError(t, err)
		for _, state := range []portcheck.State{"", portcheck.Open, portcheck.Closed} {
			t.Run(filepath.Base(stem)+"/"+string(state), func(t *testing.T) {
				var v Verdicts
				if state != "" {
					if len(jobs) == 0 {
						t.Skip("nothing to dial")
					}
					v = fixtureVerdicts{ip: jobs[0].IP, ports: jobs[0].Ports, state: state, at: testNow.Add(-time.Second)}
				}
				resp, _, err := Sync(req, v, testNow)
				require.NoError(t, err)
				requireFreshReplicaAgrees(t, DefaultConfig(), req, resp, v, testNow)
			})
		}
	}
}
