package chart

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	kyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// openAPISchema is the structural subset of a CRD's openAPIV3Schema that the
// API server enforces on create: types, known fields (pruning would silently
// drop the rest), required fields, enums, patterns and bounds.
type openAPISchema struct {
	Type                 string                    `json:"type"`
	Properties           map[string]*openAPISchema `json:"properties"`
	AdditionalProperties json.RawMessage           `json:"additionalProperties"`
	Items                *openAPISchema            `json:"items"`
	Required             []string                  `json:"required"`
	Enum                 []any                     `json:"enum"`
	Pattern              string                    `json:"pattern"`
	Minimum              *float64                  `json:"minimum"`
	Maximum              *float64                  `json:"maximum"`
	AnyOf                []*openAPISchema          `json:"anyOf"`
	PreserveUnknown      bool                      `json:"x-kubernetes-preserve-unknown-fields"`
	IntOrString          bool                      `json:"x-kubernetes-int-or-string"`
}

// validate returns every violation of s by v (decoded with UseNumber).
func (s *openAPISchema) validate(path string, v any) []string {
	if s == nil {
		return nil
	}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, path+": "+fmt.Sprintf(format, args...)) }
	if s.IntOrString {
		switch v.(type) {
		case json.Number, string:
		default:
			fail("want integer or string, got %T", v)
		}
		return errs
	}
	if len(s.AnyOf) > 0 {
		ok := false
		for _, alt := range s.AnyOf {
			if alt.Type == "" || len(alt.validate(path, v)) == 0 {
				ok = true
			}
		}
		if !ok {
			fail("matches none of anyOf")
		}
	}
	if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { return fmt.Sprint(e) == fmt.Sprint(v) }) {
		fail("%v not in enum %v", v, s.Enum)
	}
	switch s.Type {
	case "object":
		m, ok := v.(map[string]any)
		if !ok {
			fail("want object, got %T", v)
			return errs
		}
		for _, r := range s.Required {
			if _, ok := m[r]; !ok {
				fail("required field %q missing", r)
			}
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var additional *openAPISchema
		additionalAllowed := s.PreserveUnknown
		if len(s.AdditionalProperties) > 0 {
			if string(s.AdditionalProperties) == "true" {
				additionalAllowed = true
			} else if string(s.AdditionalProperties) != "false" {
				additional = new(openAPISchema)
				if err := json.Unmarshal(s.AdditionalProperties, additional); err != nil {
					fail("reading additionalProperties: %v", err)
				}
			}
		}
		for _, k := range keys {
			switch {
			case s.Properties[k] != nil:
				errs = append(errs, s.Properties[k].validate(path+"."+k, m[k])...)
			case additional != nil:
				errs = append(errs, additional.validate(path+"."+k, m[k])...)
			case additionalAllowed:
			default:
				fail("unknown field %q", k)
			}
		}
	case "array":
		a, ok := v.([]any)
		if !ok {
			fail("want array, got %T", v)
			return errs
		}
		for i, item := range a {
			errs = append(errs, s.Items.validate(fmt.Sprintf("%s[%d]", path, i), item)...)
		}
	case "string":
		str, ok := v.(string)
		if !ok {
			fail("want string, got %T", v)
			return errs
		}
		// CRD patterns are ECMA-262; the few RE2 cannot compile are skipped.
		if re, err := regexp.Compile(s.Pattern); s.Pattern != "" && err == nil && !re.MatchString(str) {
			fail("%q does not match %s", str, s.Pattern)
		}
	case "integer", "number":
		n, ok := v.(json.Number)
		if !ok {
			fail("want %s, got %T", s.Type, v)
			return errs
		}
		f, err := n.Float64()
		if err != nil || (s.Type == "integer" && strings.ContainsAny(n.String(), ".eE")) {
			fail("want %s, got %s", s.Type, n)
			return errs
		}
		if s.Minimum != nil && f < *s.Minimum {
			fail("%s below minimum %v", n, *s.Minimum)
		}
		if s.Maximum != nil && f > *s.Maximum {
			fail("%s above maximum %v", n, *s.Maximum)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			fail("want boolean, got %T", v)
		}
	}
	return errs
}

// validateObject validates a whole object. Its metadata is left out, as the
// API server checks ObjectMeta itself; a CRD schema only says "type: object".
func (s *openAPISchema) validateObject(id string, obj any) []string {
	if m, ok := obj.(map[string]any); ok {
		m = maps.Clone(m)
		if _, ok := m["metadata"]; ok {
			m["metadata"] = map[string]any{}
		}
		obj = m
	}
	return s.validate(id, obj)
}

// crdSchemas maps "<group>/<version> <Kind>" to the schema a real CRD serves.
type crdSchemas map[string]*openAPISchema

func (c crdSchemas) load(t *testing.T, file string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	r := kyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		js, err := kyaml.ToJSON(doc)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var crd customResourceDefinition
		if err := json.Unmarshal(js, &crd); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if crd.Kind != "CustomResourceDefinition" {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if v.Served && v.Schema.OpenAPIV3Schema != nil {
				c[crd.Spec.Group+"/"+v.Name+" "+crd.Spec.Names.Kind] = v.Schema.OpenAPIV3Schema
			}
		}
	}
}

// metacontrollerCRDs is Metacontroller v4.17.2's CRD file from
// shared/testdata: STACKDOME_SHARED, else shared/ beside the repository (as
// in CI and in developer checkouts). Without it the test skips (fails when
// CI=true).
func metacontrollerCRDs(t *testing.T) string {
	t.Helper()
	shared := os.Getenv("STACKDOME_SHARED")
	if shared == "" {
		shared = filepath.Join(repoRoot, "..", "shared")
	}
	file := filepath.Join(shared, "testdata", "metacontroller-crds-v4.17.2.yaml")
	if _, err := os.Stat(file); err != nil {
		missing(t, "Metacontroller CRDs (set STACKDOME_SHARED to a shared/ checkout): %v", err)
	}
	t.Logf("Metacontroller CRDs: the real v4.17.2 ones, %s", file)
	return file
}

// traefikVersion is the Traefik the chart is written against.
const traefikVersion = "v3.7.13"

var traefikCRDs = sync.OnceValues(func() (string, error) {
	dir, err := moduleDir("github.com/traefik/traefik/v3@" + traefikVersion)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "docs", "content", "reference", "dynamic-configuration", "kubernetes-crd-definition-v1.yml"), nil
})

// prometheusOperatorVersion is the Prometheus Operator whose CRDs the
// ServiceMonitor and PrometheusRule are checked against.
const prometheusOperatorVersion = "v0.85.0"

var prometheusOperatorCRDs = sync.OnceValues(func() ([]string, error) {
	dir, err := moduleDir("github.com/prometheus-operator/prometheus-operator@" + prometheusOperatorVersion)
	if err != nil {
		return nil, err
	}
	crds := filepath.Join(dir, "example", "prometheus-operator-crd")
	return []string{
		filepath.Join(crds, "monitoring.coreos.com_prometheusrules.yaml"),
		filepath.Join(crds, "monitoring.coreos.com_servicemonitors.yaml"),
	}, nil
})

// moduleDir downloads a module outside any module of ours, so neither go.mod
// nor go.sum is read or written, and returns its directory.
func moduleDir(modVersion string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", modVersion)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GO111MODULE=on")
	out, err := cmd.Output()
	var mod struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &mod); jerr != nil || mod.Error != "" || err != nil {
		return "", fmt.Errorf("go mod download %s: %v %s %v", modVersion, err, mod.Error, jerr)
	}
	return mod.Dir, nil
}

// realSchemas loads the CompositeController, Traefik and Prometheus Operator
// CRD schemas.
func realSchemas(t *testing.T) crdSchemas {
	t.Helper()
	s := crdSchemas{}
	s.load(t, metacontrollerCRDs(t))
	file, err := traefikCRDs()
	if err != nil {
		missing(t, "Traefik CRDs: %v", err)
	}
	s.load(t, file)
	files, err := prometheusOperatorCRDs()
	if err != nil {
		missing(t, "Prometheus Operator CRDs: %v", err)
	}
	for _, f := range files {
		s.load(t, f)
	}
	for _, want := range []string{
		"metacontroller.k8s.io/v1alpha1 CompositeController",
		"traefik.io/v1alpha1 IngressRoute",
		"traefik.io/v1alpha1 Middleware",
		"monitoring.coreos.com/v1 PrometheusRule",
		"monitoring.coreos.com/v1 ServiceMonitor",
	} {
		if s[want] == nil {
			t.Fatalf("no CRD schema for %s", want)
		}
	}
	return s
}

// TestRenderedCustomObjectsMatchRealCRDs validates every CompositeController,
// IngressRoute, Middleware, ServiceMonitor and PrometheusRule the chart can
// render against the schemas the real Metacontroller v4.17.2, Traefik v3.7.13
// and Prometheus Operator v0.85.0 CRDs serve.
func TestRenderedCustomObjectsMatchRealCRDs(t *testing.T) {
	schemas := realSchemas(t)
	for name, in := range renderCases {
		t.Run(name, func(t *testing.T) {
			checked := 0
			for _, o := range decode(t, render(t, in)) {
				s := schemas[o.apiVersion+" "+o.kind]
				if s == nil {
					continue
				}
				dec := json.NewDecoder(bytes.NewReader(o.raw))
				dec.UseNumber()
				var v any
				if err := dec.Decode(&v); err != nil {
					t.Fatal(err)
				}
				for _, e := range s.validateObject(o.id(), v) {
					t.Error(e)
				}
				checked++
			}
			if checked == 0 {
				t.Fatal("no object checked against a CRD")
			}
		})
	}
}

// TestSchemaValidatorCatchesMistakes keeps the validator honest: each broken
// CompositeController below must be rejected by Metacontroller's schema.
func TestSchemaValidatorCatchesMistakes(t *testing.T) {
	schemas := crdSchemas{}
	schemas.load(t, metacontrollerCRDs(t))
	cc := schemas["metacontroller.k8s.io/v1alpha1 CompositeController"]
	if cc == nil {
		t.Fatal("no CompositeController schema")
	}
	tests := map[string]struct {
		doc  string
		want string
	}{
		"valid": {doc: `{"apiVersion":"metacontroller.k8s.io/v1alpha1","kind":"CompositeController","metadata":{"name":"x"},"spec":{"parentResource":{"apiVersion":"a/v1","resource":"bs"},"hooks":{"sync":{"webhook":{"service":{"name":"s","namespace":"n","port":80}}}}}}`},
		"unknown field": {
			doc:  `{"apiVersion":"metacontroller.k8s.io/v1alpha1","kind":"CompositeController","metadata":{"name":"x"},"spec":{"parentResource":{"apiVersion":"a/v1","resource":"bs"},"generateSelectors":true}}`,
			want: `unknown field "generateSelectors"`,
		},
		"wrong type": {
			doc:  `{"apiVersion":"metacontroller.k8s.io/v1alpha1","kind":"CompositeController","metadata":{"name":"x"},"spec":{"parentResource":{"apiVersion":"a/v1","resource":"bs"},"resyncPeriodSeconds":"60"}}`,
			want: "want integer",
		},
		"missing required": {
			doc:  `{"apiVersion":"metacontroller.k8s.io/v1alpha1","kind":"CompositeController","metadata":{"name":"x"},"spec":{"parentResource":{"resource":"bs"}}}`,
			want: `required field "apiVersion" missing`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dec := json.NewDecoder(strings.NewReader(tc.doc))
			dec.UseNumber()
			var v any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			got := strings.Join(cc.validateObject("cc", v), "\n")
			if tc.want == "" && got != "" {
				t.Fatalf("valid object rejected: %s", got)
			}
			if !strings.Contains(got, tc.want) {
				t.Fatalf("want an error containing %q, got %q", tc.want, got)
			}
		})
	}
}
