package hooks

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/hooks/internal/status"
	"github.com/stackdome/stackdome/schema"
)

// TestSyncHookVersionSwitchKeepsChildren: the chart moving its sync hook
// between versions v1 and v2 changes the keys of every observed child and
// which related objects arrive (metacontroller/metacontroller@v4.17.2
// pkg/controller/composite/api/v1/hooks.go: a v1 sync request holds only
// the related objects of a namespaced parent's own namespace), and must
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
	pages.LastTransitionTime = status.Stamp(upgraded)
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
