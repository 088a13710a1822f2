package schema

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
)

// TestStoredIsTheServers holds AsStored to what the API server's decoder
// and defaulter do to the same content (customresource_handler.go at
// v0.37.2: PruneWithOptions tracking unknown fields,
// PruneNonNullableNullsWithoutDefaults, then Default): the same spec and the
// same unknown paths, for every spec of the sync fixtures and scenarios and
// for specs with unknown fields and nulls at every depth.
func TestStoredIsTheServers(t *testing.T) {
	d := newCRDDoor(t)
	specs := map[string]string{
		"unknown fields": `{"type":"Service","image":"nginx","color":"blue","ports":[{"name":"http","port":80,"public":true,"weight":3}],
			"errorPages":{"brand":"acme","theme":"dark"},"resources":{"limits":{"memory":"1Gi"}},"env":[{"name":"A","valueFrom":{"configMapKeyRef":{"key":"k"}}}]}`,
		"nulls": `{"type":"Service","image":"nginx","replicas":null,"errorPages":{"enabled":null},"ports":null,
			"envFrom":[{"configMapRef":{"name":null}}]}`,
		"defaults inside lists": `{"type":"Service","image":"nginx","envFrom":[{"secretRef":{}},{"configMapRef":{"name":"x"}}],
			"env":[{"name":"B","valueFrom":{"secretKeyRef":{"key":"k"}}}]}`,
	}
	for _, glob := range []string{"../testdata/sync/*.request.json", "../testdata/scenarios/*.json"} {
		paths, err := filepath.Glob(glob)
		require.NoError(t, err)
		for _, p := range paths {
			if strings.HasSuffix(p, ".golden.json") {
				continue
			}
			var doc struct {
				Spec   json.RawMessage `json:"spec"`
				Parent struct {
					Spec json.RawMessage `json:"spec"`
				} `json:"parent"`
			}
			readJSON(t, p, &doc)
			s := doc.Spec
			if len(s) == 0 {
				s = doc.Parent.Spec
			}
			if len(s) > 0 && s[0] == '{' {
				specs[filepath.Base(p)] = string(s)
			}
		}
	}
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) {
			var ours, theirs map[string]any
			require.NoError(t, json.Unmarshal([]byte(spec), &ours))
			require.NoError(t, json.Unmarshal([]byte(spec), &theirs))
			pruned, err := AsStored(ours)
			require.NoError(t, err)

			obj := map[string]any{"apiVersion": APIVersion, "kind": Kind,
				"metadata": map[string]any{"name": "app", "namespace": "team"}, "spec": theirs}
			unknown := structuralpruning.PruneWithOptions(obj, d.structural, true,
				structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
			structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, d.structural)
			structuraldefaulting.Default(obj, d.structural)

			require.Empty(t, cmp.Diff(obj["spec"], any(ours)), "spec: API server (-) and AsStored (+)")
			require.Empty(t, cmp.Diff(unknown, pruned), "unknown fields: API server (-) and AsStored (+)")
		})
	}
}
