package e2e

// Which Metacontroller CRDs the suite installs. This file has no build tag:
// TestWrittenCRDWithinReal runs in `make test` too.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// writtenCRD is the CompositeController CRD written for this suite, relative
// to the repository root.
const writtenCRD = "e2e/testdata/compositecontroller-crd.yaml"

// sharedDir is where shared/ is: STACKDOME_SHARED, else <root>/../shared
// (beside the repository, as in CI).
func sharedDir(root string) string {
	if d := os.Getenv("STACKDOME_SHARED"); d != "" {
		return d
	}
	return filepath.Join(root, "..", "shared")
}

// realCRDs is Metacontroller v4.17.2's own CRD file inside shared.
func realCRDs(shared string) string {
	return filepath.Join(shared, "testdata", "metacontroller-crds-v4.17.2.yaml")
}

// metacontrollerCRDs is the Metacontroller CRD file the suite installs.
type metacontrollerCRDs struct {
	path string
	real bool // Metacontroller v4.17.2's own CRDs (else the written one)
	why  string
}

// String says which CRDs these are and what the strict checks of the
// chart's CompositeController are then worth.
func (m metacontrollerCRDs) String() string {
	if m.real {
		return fmt.Sprintf("Metacontroller CRDs: the real v4.17.2 ones (%s); the chart's CompositeController is checked strictly against Metacontroller's own schema", m.path)
	}
	return fmt.Sprintf("Metacontroller CRDs: the real ones are not there (%s; set STACKDOME_SHARED to a shared/ checkout to use them); "+
		"installing %s, written for this suite: the chart's CompositeController is checked strictly against that schema, not Metacontroller's own", m.why, writtenCRD)
}

// crdSchema is the part of a CRD's openAPIV3Schema that decides what the API
// server accepts and stores.
type crdSchema struct {
	Type                 string                `json:"type"`
	Format               string                `json:"format"`
	Default              any                   `json:"default"`
	Enum                 []any                 `json:"enum"`
	Required             []string              `json:"required"`
	Properties           map[string]*crdSchema `json:"properties"`
	Items                *crdSchema            `json:"items"`
	AdditionalProperties *crdSchema            `json:"additionalProperties"`
	PreserveUnknown      bool                  `json:"x-kubernetes-preserve-unknown-fields"`
	ListType             string                `json:"x-kubernetes-list-type"`
	MapType              string                `json:"x-kubernetes-map-type"`
}

// crdDoc is one CustomResourceDefinition: what names and serves it, and the
// schema of each version.
type crdDoc struct {
	Metadata struct {
		Name        string            `json:"name"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Group    string          `json:"group"`
		Names    json.RawMessage `json:"names"`
		Scope    string          `json:"scope"`
		Versions []struct {
			Name         string          `json:"name"`
			Served       bool            `json:"served"`
			Storage      bool            `json:"storage"`
			Subresources json.RawMessage `json:"subresources"`
			Schema       struct {
				OpenAPIV3Schema *crdSchema `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

// readCRDs reads every CustomResourceDefinition of a multi-document YAML
// file, by name.
func readCRDs(t *testing.T, path string) map[string]*crdDoc {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*crdDoc{}
	r := kyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		js, err := kyaml.ToJSON(doc)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if string(bytes.TrimSpace(js)) == "null" {
			continue
		}
		var c crdDoc
		if err := json.Unmarshal(js, &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out[c.Metadata.Name] = &c
	}
}

// schemaWithin returns every way the written schema w differs from the real
// r, other than leaving out fields: each field w declares must be in r with
// the same type, format, default, enum, list and map type; each object must
// require what r requires of the fields w declares; and w may preserve
// unknown fields only where r does.
func schemaWithin(path string, w, r *crdSchema) []string {
	if r == nil {
		return []string{path + ": not in the real CRD"}
	}
	var out []string
	differ := func(what string, wv, rv any) {
		if d := cmp.Diff(rv, wv); d != "" {
			out = append(out, fmt.Sprintf("%s: %s differs (-real +written):\n%s", path, what, d))
		}
	}
	differ("type", w.Type, r.Type)
	differ("format", w.Format, r.Format)
	differ("default", w.Default, r.Default)
	differ("enum", w.Enum, r.Enum)
	differ("x-kubernetes-list-type", w.ListType, r.ListType)
	differ("x-kubernetes-map-type", w.MapType, r.MapType)
	if w.PreserveUnknown && !r.PreserveUnknown {
		out = append(out, path+": preserves unknown fields, the real CRD does not")
	}
	var required []string
	for _, f := range r.Required {
		if w.Properties[f] != nil {
			required = append(required, f)
		}
	}
	differ("required (of the fields declared)", slices.Sorted(slices.Values(w.Required)), slices.Sorted(slices.Values(required)))
	for _, k := range slices.Sorted(maps.Keys(w.Properties)) {
		out = append(out, schemaWithin(path+"."+k, w.Properties[k], r.Properties[k])...)
	}
	if w.Items != nil {
		out = append(out, schemaWithin(path+"[]", w.Items, r.Items)...)
	}
	if w.AdditionalProperties != nil {
		out = append(out, schemaWithin(path+"{}", w.AdditionalProperties, r.AdditionalProperties)...)
	}
	return out
}

// TestWrittenCRDWithinReal: the CompositeController CRD written for this
// suite is Metacontroller v4.17.2's, trimmed — the same names, scope,
// version and subresources, and no field the real schema does not have or
// types differently — so a chart object it accepts strictly, the real one
// accepts too (as far as the fields the chart can set go). It needs the
// real CRDs from shared/ and skips without them.
func TestWrittenCRDWithinReal(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	real := realCRDs(sharedDir(root))
	if _, err := os.Stat(real); err != nil {
		t.Skipf("the real Metacontroller CRDs are not there: %v", err)
	}
	const name = "compositecontrollers.metacontroller.k8s.io"
	w := readCRDs(t, filepath.Join(root, filepath.FromSlash(writtenCRD)))[name]
	r := readCRDs(t, real)[name]
	if w == nil || r == nil {
		t.Fatalf("%s: written %v, real %v", name, w != nil, r != nil)
	}
	if d := cmp.Diff(r.Metadata.Annotations["api-approved.kubernetes.io"], w.Metadata.Annotations["api-approved.kubernetes.io"]); d != "" {
		t.Errorf("api-approved.kubernetes.io (-real +written):\n%s", d)
	}
	type served struct {
		Group, Scope, Version string
		Names, Subresources   string
		Served, Storage       bool
	}
	of := func(c *crdDoc) served {
		if len(c.Spec.Versions) != 1 {
			t.Fatalf("%d versions, want 1", len(c.Spec.Versions))
		}
		v := c.Spec.Versions[0]
		var names, sub any
		_ = json.Unmarshal(c.Spec.Names, &names)
		_ = json.Unmarshal(v.Subresources, &sub)
		return served{Group: c.Spec.Group, Scope: c.Spec.Scope, Version: v.Name, Names: fmt.Sprint(names), Subresources: fmt.Sprint(sub), Served: v.Served, Storage: v.Storage}
	}
	if d := cmp.Diff(of(r), of(w)); d != "" {
		t.Errorf("names and versions (-real +written):\n%s", d)
	}
	for _, e := range schemaWithin("openAPIV3Schema", w.Spec.Versions[0].Schema.OpenAPIV3Schema, r.Spec.Versions[0].Schema.OpenAPIV3Schema) {
		t.Error(e)
	}
}
