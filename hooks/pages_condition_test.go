package hooks

import (
	"encoding/json"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/schema"
)

// TestPagesCondition is the ErrorPages condition for every state of the
// wiring a request can show.
func TestPagesCondition(t *testing.T) {
	public := schema.Default(schema.Spec{Type: schema.TypeService, Image: "app:1", Host: "h.example.com",
		Ports: []schema.Port{{Name: "http", Port: 8080, Public: true}}})
	private := schema.Default(schema.Spec{Type: schema.TypeService, Image: "app:1", Ports: []schema.Port{{Name: "http", Port: 8080}}})
	off := public
	off.ErrorPages = &schema.ErrorPages{Enabled: new(false)}
	addr := []netip.Addr{netip.MustParseAddr("10.96.0.17")}
	cross := DefaultConfig()
	cross.ErrorService.CrossNamespace = true
	none := DefaultConfig()
	none.NoErrorService = true
	type want struct {
		Present bool
		Wired   bool
		Reason  schema.Reason
	}
	for name, tc := range map[string]struct {
		cfg  Config
		spec schema.Spec
		view wiringView
		want want
	}{
		"private app: no condition":       {cfg: DefaultConfig(), spec: private, view: wiringView{related: seen(addr...)}},
		"pages off in the spec":           {cfg: DefaultConfig(), spec: off, view: wiringView{related: seen(addr...)}},
		"no error Service installed":      {cfg: none, spec: public},
		"service not in the request":      {cfg: DefaultConfig(), spec: public, want: want{Present: true, Reason: schema.ReasonErrorServiceNotSeen}},
		"not in the request, still wired": {cfg: DefaultConfig(), spec: public, view: wiringView{slice: addr, serviceObserved: true, routeRefers: true}, want: want{Present: true, Reason: schema.ReasonErrorServiceNotSeen}},
		"service without an address":      {cfg: DefaultConfig(), spec: public, view: wiringView{related: seen()}, want: want{Present: true, Reason: schema.ReasonErrorServiceNoAddress}},
		"no address, the slice keeps one": {cfg: DefaultConfig(), spec: public, view: wiringView{related: seen(), slice: addr, serviceObserved: true, routeRefers: true}, want: want{Present: true, Wired: true, Reason: schema.ReasonWired}},
		"being created":                   {cfg: DefaultConfig(), spec: public, view: wiringView{related: seen(addr...)}, want: want{Present: true, Reason: schema.ReasonWiringPending}},
		"wired":                           {cfg: DefaultConfig(), spec: public, view: wiringView{related: seen(addr...), slice: addr, serviceObserved: true, routeRefers: true}, want: want{Present: true, Wired: true, Reason: schema.ReasonWired}},
		"cross-namespace, pending":        {cfg: cross, spec: public, want: want{Present: true, Reason: schema.ReasonWiringPending}},
		"cross-namespace, wired":          {cfg: cross, spec: public, view: wiringView{routeRefers: true}, want: want{Present: true, Wired: true, Reason: schema.ReasonWired}},
	} {
		t.Run(name, func(t *testing.T) {
			pv, ok := pagesCondition(tc.cfg.withDefaults(), "web", tc.spec, tc.view)
			got := want{Present: ok, Wired: pv.wired, Reason: pv.reason}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ErrorPages condition (-want +got):\n%s", diff)
			}
			if ok && !pv.wired {
				require.Contains(t, pv.message, "5xx", "a False condition says what it costs")
			}
			if pv.reason == schema.ReasonErrorServiceNotSeen {
				require.Contains(t, pv.message, "stackdome/stackdome-error-pages", "it names the Service it cannot see")
				require.Contains(t, pv.message, "version v2", "and what to check")
			}
		})
	}
}

// TestSyncHookVersionSwitchKeepsChildren: the chart moving its sync hook
// between versions v1 and v2 changes the keys of every observed child and
// which related objects arrive (reference/metacontroller.md §17), and must
// delete or change no child. Each pair is the same cluster state as
// Metacontroller v4.17.2 sends it to a hook at each version: every child the
// first answer returns, the second returns byte for byte; with equal set,
// both return the same children.
func TestSyncHookVersionSwitchKeepsChildren(t *testing.T) {
	for _, tc := range []struct {
		before, after string
		equal         bool
	}{
		{before: "sync-hook-v1-unwired", after: "sync-hook-v2-switched"},               // the upgrade: the wiring is added
		{before: "sync-hook-v2-wired", after: "sync-hook-v1-rolled-back", equal: true}, // a rollback: everything is kept
	} {
		t.Run(tc.before+"→"+tc.after, func(t *testing.T) {
			before, after := goldenChildren(t, tc.before), goldenChildren(t, tc.after)
			for key, child := range before {
				require.Contains(t, after, key, "%s deleted by the switch", key)
				require.JSONEq(t, string(child), string(after[key]), "%s changed by the switch", key)
			}
			if tc.equal {
				require.Len(t, after, len(before), "children added by the switch")
			}
			// The fixtures are what they say: keyed by name at v1,
			// namespace/name at v2.
			for _, stem := range []string{tc.before, tc.after} {
				var req struct {
					Controller struct {
						Spec struct {
							Hooks struct {
								Sync struct{ Version string }
							}
						}
					}
					Children map[string]map[string]json.RawMessage
				}
				require.NoError(t, json.Unmarshal(readFile(t, filepath.Join("..", "testdata", "sync", stem+".request.json")), &req))
				v2 := req.Controller.Spec.Hooks.Sync.Version == "v2"
				for _, g := range req.Children {
					for k := range g {
						require.Equal(t, v2, strings.Contains(k, "/"), "%s: key %q of a sync hook at %s", stem, k, req.Controller.Spec.Hooks.Sync.Version)
					}
				}
			}
		})
	}
}

// goldenChildren are the children of a golden answer by kind/name.
func goldenChildren(t *testing.T, stem string) map[string]json.RawMessage {
	t.Helper()
	var resp struct {
		Children []json.RawMessage `json:"children"`
	}
	require.NoError(t, json.Unmarshal(readFile(t, filepath.Join("..", "testdata", "sync", stem+".response.json")), &resp))
	out := map[string]json.RawMessage{}
	for _, c := range resp.Children {
		var o struct {
			Kind     string
			Metadata struct{ Name string }
		}
		require.NoError(t, json.Unmarshal(c, &o))
		out[o.Kind+"/"+o.Metadata.Name] = c
	}
	return out
}

// TestUpgradeAddsTheErrorPagesCondition: a wired public app whose status an
// earlier version wrote (no ErrorPages condition) gets, at its first sync
// after the upgrade, exactly that condition added, stamped then: the same
// children, every other field of its status kept, one status write. Synced
// again, it writes nothing.
func TestUpgradeAddsTheErrorPagesCondition(t *testing.T) {
	req := readRequest(t, filepath.Join("..", "testdata", "sync", "serving"))
	var golden struct {
		Children []json.RawMessage `json:"children"`
		Status   schema.Status     `json:"status"`
	}
	require.NoError(t, json.Unmarshal(readFile(t, filepath.Join("..", "testdata", "sync", "serving.response.json")), &golden))

	var p struct {
		Status schema.Status `json:"status"`
	}
	require.NoError(t, json.Unmarshal(req.Parent, &p))
	require.NotNil(t, find(p.Status.Conditions, schema.CondErrorPages), "the fixture's status is this version's")
	p.Status.Conditions = slices.DeleteFunc(p.Status.Conditions, func(c metav1.Condition) bool { return c.Type == string(schema.CondErrorPages) })
	old := withStatus(t, req, p.Status)
	upgraded := testNow.Add(time.Hour)
	resp, _, err := Sync(old, nil, upgraded)
	require.NoError(t, err)
	got := resp.Status.(schema.Status)

	want := golden.Status
	pages := find(want.Conditions, schema.CondErrorPages)
	require.NotNil(t, pages, "serving is wired")
	pages.LastTransitionTime = stampOf(upgraded)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status after the upgrade (-want +got):\n%s", diff)
	}
	children, err := json.Marshal(resp.Children)
	require.NoError(t, err)
	wantChildren, err := json.Marshal(golden.Children)
	require.NoError(t, err)
	require.JSONEq(t, string(wantChildren), string(children), "the upgrade changes no child")

	again, _, err := Sync(withStatus(t, old, got), nil, upgraded.Add(time.Minute))
	require.NoError(t, err)
	require.Empty(t, cmp.Diff(got, again.Status), "a second sync writes nothing")
}
