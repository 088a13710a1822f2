// No build tag: TestWrittenCRDWithinReal runs in `make test` too.

package framework

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

// Which Metacontroller CRDs the suite installs, and the comparison of a CRD
// schema written for the suite with Metacontroller's own.

// WrittenCRD is the CompositeController CRD written for this suite, relative
// to the repository root.
const WrittenCRD = "e2e/testdata/compositecontroller-crd.yaml"

// RealCRDs is Metacontroller v4.17.2's own CRD file inside shared.
func RealCRDs(shared string) string {
	return filepath.Join(shared, "testdata", "metacontroller-crds-v4.17.2.yaml")
}

// MetacontrollerCRDs is the Metacontroller CRD file the suite installs.
type MetacontrollerCRDs struct {
	Path string
	Real bool // Metacontroller v4.17.2's own CRDs (else the written one)
	Why  string
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

// CRDDoc is one CustomResourceDefinition: what names and serves it, and the
// schema of each version.
type CRDDoc struct {
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

// ReadCRDs reads every CustomResourceDefinition of a multi-document YAML
// file, by name.
func ReadCRDs(t *testing.T, path string) map[string]*CRDDoc {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*CRDDoc{}
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
		var c CRDDoc
		if err := json.Unmarshal(js, &c); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out[c.Metadata.Name] = &c
	}
}

// SchemaWithin returns every way the written schema w differs from the real
// r, other than leaving out fields: each field w declares must be in r with
// the same type, format, default, enum, list and map type; each object must
// require what r requires of the fields w declares; and w may preserve
// unknown fields only where r does.
func SchemaWithin(path string, w, r *crdSchema) []string {
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
		out = append(out, SchemaWithin(path+"."+k, w.Properties[k], r.Properties[k])...)
	}
	if w.Items != nil {
		out = append(out, SchemaWithin(path+"[]", w.Items, r.Items)...)
	}
	if w.AdditionalProperties != nil {
		out = append(out, SchemaWithin(path+"{}", w.AdditionalProperties, r.AdditionalProperties)...)
	}
	return out
}

// String says which CRDs these are and what the strict checks of the
// chart's CompositeController are then worth.
func (m MetacontrollerCRDs) String() string {
	if m.Real {
		return fmt.Sprintf("Metacontroller CRDs: the real v4.17.2 ones (%s); the chart's CompositeController is checked strictly against Metacontroller's own schema", m.Path)
	}
	return fmt.Sprintf("Metacontroller CRDs: the real ones are not there (%s; set STACKDOME_SHARED to a shared/ checkout to use them); "+
		"installing %s, written for this suite: the chart's CompositeController is checked strictly against that schema, not Metacontroller's own", m.Why, WrittenCRD)
}
