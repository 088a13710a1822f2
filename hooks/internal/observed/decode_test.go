package observed

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stackdome/stackdome/schema"
)

// FuzzFastDecode: what the one-pass decoder (fastOptions) and the Cache's
// object-by-object decoder (decodeCanonical) decode a sync request, and the
// former a parent and a spec, into is what encoding/json decodes them
// into, and it refuses what encoding/json refuses. Where it refused what
// encoding/json accepts, unmarshal would only be slower (it decodes again);
// where it accepted what encoding/json refuses, or decoded another value,
// the answer would change: both are failures. The seeds are the golden
// requests and a few odd shapes.
func FuzzFastDecode(f *testing.F) {
	files, err := filepath.Glob("../../../testdata/sync/*.request.json")
	if err != nil || len(files) == 0 {
		f.Fatalf("no golden requests: %v", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		`{"parent":{"metadata":{"name":"a","creationTimestamp":null,"deletionTimestamp":null}},"related":{"Pod.v1":{"a":{"status":{"startTime":"2026-11-29T11:00:20Z","conditions":[{"type":"Ready","lastTransitionTime":"2026-11-29T11:00:20+02:00"}]}}}}}`,
		`{"PARENT":{"Metadata":{"Name":"a"},"Spec":{"Type":"Service"},"SpecErr":null},"Children":{"a":{"b":{"kind":"x","kind":"y"}}}}`,
		`{"parent":{"metadata":{"name":"a"},"specErr":{}},"related":{"Pod.v1":{"a":{"metadata":{"creationTimestamp":"yesterday"}}}}}`,
		`{"parent":{"metadata":{"name":"\ud800a\u00e9\xff"}},"children":{"Deployment.apps/v1":{"a":{"spec":{"replicas":1.5}}}}}`,
		`{"parent":{"metadata":{"name":"a"}},"related":{"ConfigMap.v1":{"a":{"data":{"k":"v","k":"w"},"binaryData":null}}},"finalizing":"true"}`,
		`{"parent":{"metadata":{"name":"a","creationTimestamp":17}},"children":{"Service.v1":null}} trailing`,
		`{"children":{"Deployment.apps/v1":{"a":{"metadata":{"annotations":{"a":"1","b":null},"annotations":{"c":"\u00e9"}}}}}}`,
		`{"children":{"Deployment.apps/v1":{"a":{"metadata":{"annotations":{"a":"1"},"annotations":null,"Annotations":{"b":"2"}}}}}}`,
		`{"children":{"Deployment.apps/v1":{"a":{"metadata":{"annotations":{"a":1}}}}}}`,
		`{"children":{"Deployment.apps/v1":{"a":{"metadata":{"annotations":["a"]}}}}}`,
		`{"children":{"Deployment.apps/v1":{"a":{"metadata":{"annotations" : { "a" : "x\"}" , "b":{}}}}}}}`,
	} {
		f.Add([]byte(s))
	}
	for _, s := range []string{
		// Shapes decodeCanonical must leave to the one pass, or read alike.
		`{"parent":{"metadata":{"name":"a"}},"children":{"Service.v1":{"a":{}},"Service.v1":{"b":{}}}}`,
		`{"parent":{"metadata":{"name":"a"}},"children":{"Service.v1":{"a":{"kind":"x"},"a":{"spec":{}}}}}`,
		`{"parent":{"metadata":{"name":"a"}},"Children":{"Service.v1":{"a":{}}},"children":{"Deployment.apps/v1":{"b":{}}}}`,
		`{"parent":{"metadata":{"name":"a"}},"children":{"Service.v1":null,"Deployment.apps/v1":{}},"related":null}`,
		`{"parent":{"metadata":{"name":"a"}} "children":{}}`,
		`{"parent":{"metadata":{"name":"a"}},"children":{"Service.v1":{"a":{},}}}`,
		`{"parent":{"metadata":{"name":"a"}},"finalizing":nul}`,
		`{"parent":{"metadata":{"name":"a"}},"finalizing":null,"controller":{"x":[1,2,{"y":"\u00e9"}]}}`,
		`{"parent":{"metadata":{"name":"a"}},"controller":{"x":[1,2,}}`,
		`{"par\u0065nt":{"metadata":{"name":"a"}},"children":{"Service\u002ev1":{"a":{}}}}`,
		`{"parent":{"metadata":{"name":"a"}},"related":{"Pod.v1":{"p":null,"q":{"status":{"podIP":"10.0.0.1"}}}}}  `,
		`{"parent":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		agree(t, b, new(onePass), new(onePass))
		canonicalAgrees(t, b)
		var p struct {
			Parent json.RawMessage `json:"parent"`
		}
		if json.Unmarshal(b, &p) == nil && len(p.Parent) > 0 {
			agree(t, p.Parent, new(Parent), new(Parent))
			var spec struct {
				Spec json.RawMessage `json:"spec"`
			}
			if json.Unmarshal(p.Parent, &spec) == nil && len(spec.Spec) > 0 {
				agree(t, spec.Spec, new(schema.Spec), new(schema.Spec))
			}
		}
	})
}

// canonicalAgrees holds Cache.decodeCanonical to encoding/json: a body it
// decodes, encoding/json decodes into the same values, whether its objects
// were in the Cache (the second time) or not (the first).
func canonicalAgrees(t *testing.T, b []byte) {
	t.Helper()
	c := NewCache(1 << 20)
	for _, pass := range []string{"first", "second"} {
		var one onePass
		if !c.decodeCanonical(b, &one) {
			if pass == "second" {
				t.Fatal("decoded the first time, not the second")
			}
			return
		}
		var std onePass
		if err := json.Unmarshal(b, &std); err != nil {
			t.Fatalf("decodeCanonical decodes what encoding/json refuses (%v)", err)
		}
		sameTime := cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) && a.Location() == b.Location() })
		if d := cmp.Diff(std, one, sameTime, cmp.Exporter(func(reflect.Type) bool { return true })); d != "" {
			t.Fatalf("%s pass: decodeCanonical decodes differently (-encoding/json +canonical):\n%s", pass, d)
		}
	}
}

// agree decodes b with both decoders and fails unless they agree.
func agree[T any](t *testing.T, b []byte, fast, std *T) {
	t.Helper()
	ferr := unmarshalFast(b, fast)
	serr := json.Unmarshal(b, std)
	if (ferr == nil) != (serr == nil) {
		t.Fatalf("%T: the fast decoder says %v, encoding/json %v", fast, ferr, serr)
	}
	if ferr != nil {
		return
	}
	sameTime := cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) && a.Location() == b.Location() })
	if d := cmp.Diff(std, fast, sameTime, cmp.Exporter(func(reflect.Type) bool { return true })); d != "" {
		t.Fatalf("%T decodes differently (-encoding/json +fast):\n%s", fast, d)
	}
}

// TestMetacontrollersRequestsAreCanonical: every golden request is written
// as Metacontroller writes one, so the Cache decodes it object by object
// (decodeCanonical), and a second decode of it takes every object from the
// Cache: the path FuzzFastDecode holds is the one the server takes.
func TestMetacontrollersRequestsAreCanonical(t *testing.T) {
	files, err := filepath.Glob("../../../testdata/sync/*.request.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden requests: %v", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		c := NewCache(16 << 20)
		var one onePass
		if !c.decodeCanonical(b, &one) {
			t.Errorf("%s: not decoded object by object", filepath.Base(file))
			continue
		}
		n := c.Len()
		if !c.decodeCanonical(b, &one) || c.Len() != n {
			t.Errorf("%s: decoded again, the Cache went from %d to %d entries", filepath.Base(file), n, c.Len())
		}
	}
}
