package schema

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// What the API server does to a StackResource's content on create, before
// it validates it: it prunes the fields the CRD's structural schema does not
// know and fills in the schema's defaults
// (k8s.io/apiextensions-apiserver@v0.37.2 pkg/apiserver/schema/pruning and
// schema/defaulting). The binary restates the two walks over the CRD's
// v1 types rather than linking those packages, whose defaulting brings CEL
// and about 150 packages into it; TestStoredIsTheServers checks the two
// agree on every spec the fixtures hold.

//go:embed crd.yaml
var crdYAML []byte

// storedSchema is the served version's openAPIV3Schema of crd.yaml, read once.
var storedSchema = sync.OnceValues(func() (*apiextensionsv1.JSONSchemaProps, error) {
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(crdYAML, &crd); err != nil {
		return nil, fmt.Errorf("reading crd.yaml: %w", err)
	}
	if len(crd.Spec.Versions) != 1 || crd.Spec.Versions[0].Schema == nil || crd.Spec.Versions[0].Schema.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("reading crd.yaml: want one version with a schema, got %d versions", len(crd.Spec.Versions))
	}
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema, nil
})

// AsStored makes spec, a StackResource's spec as JSON decodes it, what the
// API server stores on create: every field the CRD does not know removed,
// then every default of the CRD filled in, in place. It returns the paths
// of the fields it removed (spec.foo, spec.ports[0].bar), sorted: a
// `kubectl apply` with its default strict field validation refuses the
// object for them instead.
func AsStored(spec map[string]any) ([]string, error) {
	root, err := storedSchema()
	if err != nil {
		return nil, err
	}
	s, ok := root.Properties["spec"]
	if !ok {
		return nil, fmt.Errorf("crd.yaml has no spec")
	}
	var pruned []string
	prune(spec, &s, "spec", &pruned)
	applyDefaults(spec, &s)
	sort.Strings(pruned)
	return pruned, nil
}

// prune removes from v what s does not know, recording each removed path;
// a null where s is not nullable is removed too, as the server's decoder
// drops it before defaulting.
func prune(v any, s *apiextensionsv1.JSONSchemaProps, path string, pruned *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			p := path + "." + k
			var sub *apiextensionsv1.JSONSchemaProps
			if ps, ok := s.Properties[k]; ok {
				sub = &ps
			} else if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
				sub = ap.Schema
			} else if (ap != nil && ap.Allows) || preserves(s) {
				continue
			} else {
				delete(x, k)
				*pruned = append(*pruned, p)
				continue
			}
			if val == nil && !sub.Nullable {
				delete(x, k)
				continue
			}
			prune(val, sub, p, pruned)
		}
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for i, item := range x {
				prune(item, s.Items.Schema, fmt.Sprintf("%s[%d]", path, i), pruned)
			}
		}
	}
}

func preserves(s *apiextensionsv1.JSONSchemaProps) bool {
	return s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields
}

// applyDefaults fills in, at every level of v, each property s defaults
// that v lacks, then walks into what v holds.
func applyDefaults(v any, s *apiextensionsv1.JSONSchemaProps) {
	switch x := v.(type) {
	case map[string]any:
		for k, ps := range s.Properties {
			if _, ok := x[k]; !ok && ps.Default != nil {
				var d any
				if err := json.Unmarshal(ps.Default.Raw, &d); err == nil {
					x[k] = d
				}
			}
		}
		for k, val := range x {
			if ps, ok := s.Properties[k]; ok {
				applyDefaults(val, &ps)
			} else if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
				applyDefaults(val, ap.Schema)
			}
		}
	case []any:
		if s.Items != nil && s.Items.Schema != nil {
			for _, item := range x {
				applyDefaults(item, s.Items.Schema)
			}
		}
	}
}
