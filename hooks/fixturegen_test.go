package hooks

import (
	"encoding/json"
	"flag"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/internal/mcrequest"
	"github.com/stackdome/stackdome/metacontroller"
)

var updateFixtures = flag.Bool("update-fixtures", false, "rewrite testdata/sync/*.request.json from the generator (make fixtures)")

// TestGenerateFixtures builds every testdata/sync/<case>.request.json from
// typed objects (fixturegen_cases_test.go) through the one Metacontroller
// stand-in (internal/mcrequest), the hook's own Customize for what relates
// and its own Sync for the children fed back as observed, and fails when a
// committed request is not what it builds: `make fixtures` (go test ./hooks
// -run '^TestGenerateFixtures$' -update-fixtures) rewrites them, then the
// answers.
func TestGenerateFixtures(t *testing.T) {
	dir := filepath.Join("..", "testdata", "sync")
	g := newFixtureGen(t)
	cases := g.cases()
	committed, err := filepath.Glob(filepath.Join(dir, "*.request.json"))
	require.NoError(t, err)
	for _, p := range committed {
		if _, ok := cases[strings.TrimSuffix(filepath.Base(p), ".request.json")]; !ok {
			t.Errorf("%s: no generator case makes it; add one to hooks/fixturegen_cases_test.go or delete it", p)
		}
	}
	names := make([]string, 0, len(cases))
	for name := range cases {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			golden(t, filepath.Join(dir, name+".request.json"), mcrequest.Encode(cases[name].Request()), *updateFixtures, "run make fixtures")
		})
	}
}

// fixtureGen holds the stand-in cluster the cases share: the chart's
// error-page Service and the team's own ConfigMaps, Secrets and
// Middlewares, as the API server stores them.
type fixtureGen struct {
	t    testing.TB
	cfg  Config
	team []mcrequest.Object
	n    int // the last parent's number
}

func newFixtureGen(t testing.TB) *fixtureGen {
	return &fixtureGen{t: t, cfg: DefaultConfig(), team: teamObjects()}
}

// fixture is one request's inputs: rebuilt whole each time the parent
// changes, as Metacontroller sends each sync afresh.
type fixture struct {
	g        *fixtureGen
	parent   mcrequest.Object
	children []mcrequest.Object
	pods     []mcrequest.Object
	jobs     []mcrequest.Object // a CronJob's Jobs
	v1       bool               // the sync hook at version v1
	noErrSvc bool               // the chart's error-page Service not installed
}

// Request is the sync request Metacontroller sends for f: the hook's own
// Customize answer selects the related objects.
func (f fixture) Request() *metacontroller.SyncRequest {
	cust, err := f.g.cfg.Customize(mcrequest.Customize(f.parent))
	require.NoError(f.g.t, err)
	cluster := append([]mcrequest.Object{}, f.g.team...)
	if !f.noErrSvc {
		cluster = append(cluster, errorService())
	}
	for _, o := range append(append([]mcrequest.Object{}, f.pods...), f.jobs...) {
		o = mcrequest.Clone(o)
		if mcrequest.Namespace(o) == "" {
			mcrequest.Meta(o)["namespace"] = mcrequest.Namespace(f.parent)
		}
		cluster = append(cluster, o)
	}
	s := mcrequest.Sync{Parent: mcrequest.Clone(f.parent), Cluster: cluster, Rules: cust.RelatedResources}
	for _, c := range f.children {
		s.Children = append(s.Children, mcrequest.Clone(c))
	}
	if f.v1 {
		s.SyncVersion = "v1"
	}
	return s.Request()
}

func (f fixture) sync() *metacontroller.SyncResponse {
	resp, _, err := Sync(f.Request(), nil, testNow)
	require.NoError(f.g.t, err)
	return resp
}

// desired is the hook's answer's children by "Kind/name".
func (f fixture) desired() map[string]mcrequest.Object {
	out := map[string]mcrequest.Object{}
	for _, c := range f.sync().Children {
		o := mcrequest.ToObject(c)
		out[mcrequest.Str(o, "kind")+"/"+mcrequest.Name(o)] = o
	}
	return out
}

// converged is f with the status the hook converges to as its parent's
// status: Metacontroller writes each answer's status, and each write
// triggers a sync, until the answer feeds back unchanged.
func (f fixture) converged() fixture {
	for range 5 {
		st := mcrequest.ToObject(f.sync().Status)
		if cmp.Equal(f.parent["status"], any(st)) {
			return f
		}
		f.parent = mcrequest.Clone(f.parent)
		f.parent["status"] = st
	}
	f.g.t.Fatalf("the status of %s does not converge", mcrequest.Name(f.parent))
	return f
}

// withSpec is f after the user changed the spec: generation 2.
func (f fixture) withSpec(edit func(spec map[string]any)) fixture {
	f.parent = mcrequest.Clone(f.parent)
	edit(mcrequest.Map(f.parent, "spec"))
	mcrequest.Meta(f.parent)["generation"] = 2
	return f
}

// newParent is the next StackResource, number n, as kubectl apply created
// it from spec (JSON, kept as written: a custom resource is stored as sent).
func (g *fixtureGen) newParent(name, ns, spec string) (mcrequest.Object, int) {
	g.n++
	return parent(name, ns, spec, g.n), g.n
}

// settled is the children the hook answers once what it answered is
// observed: the IngressRoute refers to the errors Middleware only once the
// Middleware, the mirrored Service and its EndpointSlice exist.
func (g *fixtureGen) settled(f fixture) map[string]mcrequest.Object {
	d := f.desired()
	for range 3 {
		next := f
		next.children = observeAll(f.parent, d, 0, nil, "")
		nd := next.desired()
		if cmp.Equal(d, nd) {
			return d
		}
		d = nd
	}
	g.t.Fatalf("the children of %s do not settle", mcrequest.Name(f.parent))
	return nil
}

// observeAll is every desired child as stored (mcrequest.Observed), child i
// by "Kind/name" order numbered 10n+i; the one of kind workload (Deployment
// when empty) with status.
func observeAll(parent mcrequest.Object, desired map[string]mcrequest.Object, n int, status any, workload string) []mcrequest.Object {
	if workload == "" {
		workload = "Deployment"
	}
	keys := make([]string, 0, len(desired))
	for k := range desired {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []mcrequest.Object
	for i, k := range keys {
		var st map[string]any
		if mcrequest.Str(desired[k], "kind") == workload && status != nil {
			st = mcrequest.ToObject(status)
		}
		out = append(out, mcrequest.Observed(desired[k], parent, n*10+i, st))
	}
	return out
}

// findKind is the object of kind among objs.
func findKind(t testing.TB, objs []mcrequest.Object, kind string) mcrequest.Object {
	for _, o := range objs {
		if mcrequest.Str(o, "kind") == kind {
			return o
		}
	}
	t.Fatalf("no %s among %d objects", kind, len(objs))
	return nil
}

// obj decodes a JSON literal of the cases.
func obj(s string) mcrequest.Object {
	var o mcrequest.Object
	if err := json.Unmarshal([]byte(s), &o); err != nil {
		panic(fmt.Sprintf("fixture JSON %q: %v", s, err))
	}
	return o
}
