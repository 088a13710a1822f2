package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// TestFixtureParentsAreAsStored holds every sync fixture's parent
// (testdata/sync/*.request.json, made by hooks' generator) to what the API
// server stores of it: its spec pruned and defaulted with the CRD's
// structural schema, as the API server does on create and Metacontroller
// then sends, changes nothing: a spec written without a default the CRD
// states, or with a field it prunes, fails here naming the field (the
// cases' specs are written out in hooks/fixturegen_*_test.go). The
// scenarios' specs are held the same way.
func TestFixtureParentsAreAsStored(t *testing.T) {
	d := newCRDDoor(t)
	requests, err := filepath.Glob(filepath.Join("..", "testdata", "sync", "*.request.json"))
	require.NoError(t, err)
	require.NotEmpty(t, requests)
	for _, p := range requests {
		t.Run(filepath.Base(p), func(t *testing.T) {
			var req struct {
				Parent struct {
					Spec json.RawMessage `json:"spec"`
				} `json:"parent"`
			}
			readJSON(t, p, &req)
			d.requireStored(t, req.Parent.Spec)
		})
	}
	// The scenarios' apps (testdata/scenarios/*.json, the spec every step's
	// parent carries) likewise.
	scenarios, err := filepath.Glob(filepath.Join("..", "testdata", "scenarios", "*.json"))
	require.NoError(t, err)
	for _, p := range scenarios {
		if strings.HasSuffix(p, ".golden.json") {
			continue
		}
		t.Run(filepath.Base(p), func(t *testing.T) {
			var sc struct {
				Spec json.RawMessage `json:"spec"`
			}
			readJSON(t, p, &sc)
			require.NotEmpty(t, sc.Spec, "a scenario without a spec")
			d.requireStored(t, sc.Spec)
		})
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v))
}

// requireStored fails when spec is not what the API server stores of it:
// pruned and defaulted with the CRD's structural schema.
func (d *crdDoor) requireStored(t *testing.T, spec json.RawMessage) {
	t.Helper()
	var sent, stored map[string]any
	require.NoError(t, utiljson.Unmarshal(spec, &sent))
	require.NoError(t, utiljson.Unmarshal(spec, &stored))
	obj := map[string]any{"apiVersion": APIVersion, "kind": Kind, "metadata": map[string]any{"name": "x", "namespace": "team"}, "spec": stored}
	structuralpruning.Prune(obj, d.structural, true)
	structuraldefaulting.Default(obj, d.structural)
	if diff := cmp.Diff(sent, obj["spec"]); diff != "" {
		t.Errorf("the spec is not what the API server stores (-fixture +stored):\n%s", diff)
	}
}
