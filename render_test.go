package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/internal/mcrequest"
	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/schema"
)

var updateRender = flag.Bool("update", false, "rewrite testdata/render/*.golden from what render prints")

// goldenNow is the clock of the golden fixtures (hooks' testNow).
const goldenNow = "2026-11-29T12:00:00Z"

// TestRenderIsTheFirstSync holds render to the golden answers: for every
// fixture of testdata/sync that answers a parent with nothing observed, the
// parent as its team applied it (its kubectl last-applied annotation) and
// the objects the request relates, rendered, give the children of the
// golden answer. The first sync of the hook is a parent with no status
// (observed.Parent.Unanswered); a fixture whose parent already carries the
// status the hook converged to, but no observed child, answers the same
// children unless the spec has public ports: a new resource's IngressRoute
// refers at once to the Middlewares its first answer creates
// (hooks/internal/children/wiring.go), a later one only once they exist.
// Those are left out; the generator's first-sync-* cases are true first
// syncs with public ports.
func TestRenderIsTheFirstSync(t *testing.T) {
	paths, err := filepath.Glob("testdata/sync/*.request.json")
	require.NoError(t, err)
	var compared []string
	for _, p := range paths {
		var req metacontroller.SyncRequest
		require.NoError(t, json.Unmarshal(readBytes(t, p), &req))
		if observedAny(req) {
			continue
		}
		parent := mcrequest.ToObject(req.Parent)
		var spec schema.Spec
		require.NoError(t, json.Unmarshal(mcrequest.Raw(parent["spec"]), &spec))
		if answered(parent) && len(spec.PublicPorts()) > 0 {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(p), ".request.json")
		compared = append(compared, name)
		t.Run(name, func(t *testing.T) {
			// What the team applied, then what exists around it.
			docs := []string{mcrequest.Str(parent, "metadata", "annotations", "kubectl.kubernetes.io/last-applied-configuration")}
			require.NotEmpty(t, docs[0], "a fixture parent carries what kubectl applied")
			for _, group := range req.Related {
				for _, o := range group {
					docs = append(docs, string(o))
				}
			}
			in, err := readObjects(strings.NewReader(strings.Join(docs, "\n---\n")), "default")
			require.NoError(t, err)
			require.Len(t, in.parents, 1)
			c, err := parseFlags("render", []string{"--now", goldenNow}, func(string) (string, bool) { return "", false }, os.Stderr)
			require.NoError(t, err)
			got, err := renderOne(c.hooks, in.parents[0], in.cluster, 1, c.syncNow)
			require.NoError(t, err)

			var want struct{ Children []any }
			require.NoError(t, json.Unmarshal(readBytes(t, strings.TrimSuffix(p, ".request.json")+".response.json"), &want))
			gotChildren := make([]any, len(got.children))
			for i, c := range got.children {
				gotChildren[i] = c
			}
			require.Empty(t, cmp.Diff(mcrequest.ToObject(map[string]any{"c": want.Children})["c"], any(gotChildren)),
				"children: golden (-) and render (+)")
		})
	}
	t.Logf("compared with %d first-sync goldens: %s", len(compared), strings.Join(compared, ", "))
	require.GreaterOrEqual(t, len(compared), 10, "the goldens with nothing observed")
}

// observedAny says the request carries an observed child.
func observedAny(req metacontroller.SyncRequest) bool {
	for _, g := range req.Children {
		if len(g) > 0 {
			return true
		}
	}
	return false
}

// answered says the parent carries a status: a sync answer was stored.
func answered(parent mcrequest.Object) bool {
	st, _ := parent["status"].(map[string]any)
	return len(st) > 0
}

func readBytes(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

// TestRenderGolden: what `stackdome render -f testdata/render/<case>.yaml`
// prints, byte for byte; go test . -run TestRenderGolden -update rewrites
// the .golden files.
func TestRenderGolden(t *testing.T) {
	paths, err := filepath.Glob("testdata/render/*.yaml")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			var out, errOut bytes.Buffer
			require.NoError(t, run(context.Background(), []string{"render", "-f", p, "--now", goldenNow}, nil, &out, &errOut))
			got := out.Bytes()
			if errOut.Len() > 0 {
				got = append(append(got, "# stderr:\n"...), prefixLines(errOut.String(), "# ")...)
			}
			golden := strings.TrimSuffix(p, ".yaml") + ".golden"
			if *updateRender {
				require.NoError(t, os.WriteFile(golden, got, 0o644))
			}
			if diff := cmp.Diff(string(readBytes(t, golden)), string(got)); diff != "" {
				t.Errorf("%s differs from what render prints; go test . -run TestRenderGolden -update and review (-committed +printed):\n%s", golden, diff)
			}
		})
	}
}

func prefixLines(s, prefix string) string {
	lines := strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n")
	return prefix + strings.Join(lines, prefix) + "\n"
}
