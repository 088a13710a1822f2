package e2e

// The CompositeController CRD written for the suite against Metacontroller's
// own. This file has no build tag: TestWrittenCRDWithinReal runs in `make
// test` too, so what it uses (framework/crdschema.go, framework/vendor.go)
// has none either.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackdome/stackdome/e2e/framework"
)

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
	real := framework.RealCRDs(framework.SharedDir(root))
	if _, err := os.Stat(real); err != nil {
		t.Skipf("the real Metacontroller CRDs are not there: %v", err)
	}
	const name = "compositecontrollers.metacontroller.k8s.io"
	w := framework.ReadCRDs(t, filepath.Join(root, filepath.FromSlash(framework.WrittenCRD)))[name]
	r := framework.ReadCRDs(t, real)[name]
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
	of := func(c *framework.CRDDoc) served {
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
	for _, e := range framework.SchemaWithin("openAPIV3Schema", w.Spec.Versions[0].Schema.OpenAPIV3Schema, r.Spec.Versions[0].Schema.OpenAPIV3Schema) {
		t.Error(e)
	}
}
