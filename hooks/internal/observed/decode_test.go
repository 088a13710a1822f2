package observed

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/metacontroller"
)

// goldenRequests are the bodies of testdata/sync: requests as Metacontroller
// sends them.
func goldenRequests(tb testing.TB) map[string][]byte {
	files, err := filepath.Glob("../../../testdata/sync/*.request.json")
	require.NoError(tb, err)
	require.NotEmpty(tb, files, "no golden requests")
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(tb, err)
		out[filepath.Base(f)] = b
	}
	return out
}

// sameRequest compares two Requests whole: errors by their text, times by
// instant and location.
var sameRequest = []cmp.Option{
	cmp.Exporter(func(reflect.Type) bool { return true }),
	cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) && a.Location() == b.Location() }),
	cmp.Comparer(func(a, b error) bool { return (a == nil) == (b == nil) && (a == nil || a.Error() == b.Error()) }),
	cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".cache" }, cmp.Ignore()),
}

// FuzzDecode: a body Decode reads is one encoding/json reads too, and what
// Decode reads of it (through a Cache, the first time and the second, when
// every object and the body come from the Cache) is what FromSyncRequest
// reads of encoding/json's split of it (Sync's path): the walk splits a body
// as encoding/json does, and the Cache changes nothing.
func FuzzDecode(f *testing.F) {
	for _, b := range goldenRequests(f) {
		f.Add(b)
	}
	for _, s := range []string{
		`{"parent":{"metadata":{"name":"a"}},"related":{"Pod.v1":{"p":null,"q":{"status":{"podIP":"10.0.0.1"}}}}}  `,
		`{"parent":{"metadata":{"name":"a"}},"children":{"Service.v1":null,"Deployment.apps/v1":{}},"related":null}`,
		`{"par\u0065nt":{"metadata":{"name":"a"}},"children":{"Service\u002ev1":{"a":{}}}}`,
		`{"controller":{"x":[1,2,{"y":"\u00e9"}]},"parent":{"Metadata":{"Name":"a"}},"finalizing":true}`,
		`{"parent":{"metadata":{"name":"a"}},"children":{"Deployment.apps/v1":{"a":{"status":{"readyReplicas":"2"}}}}}`,
		`{"parent":{"metadata":{"name":"a"}},"children":{"Deployment.apps/v1":{"a":{"metadata":{"name":"a","namespace":"b"},"status":7}}}}`,
		`{"parent":{"metadata":{"name":"a"}},"related":{"ConfigMap.v1":{"a":{"data":{"k":"v"},"status":[]}}}}`,
		`{"parent":{"metadata":{"name":"a"}},"children":{"Service.v1":{"a":{"kind":"x","Kind":"y"}}}}`,
		`{"parent":{"metadata":{"name":"a"}},"Children":{"Service.v1":{"a":{}}}}`,
		`{"parent":{"metadata":{"name":"a"}},"children":{"Service.v1":{"a":{}},"Service.v1":{"b":{}}}}`,
		`{"parent":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c := NewCache(1 << 20)
		var got Request
		if Decode(b, &got, c, Budget{}) != nil {
			return
		}
		var req metacontroller.SyncRequest
		if err := json.Unmarshal(b, &req); err != nil {
			t.Fatalf("Decode reads what encoding/json refuses (%v)", err)
		}
		want := FromSyncRequest(&req)
		for _, pass := range []string{"first", "second"} {
			if d := cmp.Diff(want, got, sameRequest...); d != "" {
				t.Fatalf("%s decode: Decode reads otherwise than FromSyncRequest (-FromSyncRequest +Decode):\n%s", pass, d)
			}
			got = Request{}
			require.NoError(t, Decode(b, &got, c, Budget{}), "the second decode")
		}
	})
}

// TestDecodeRefusesWhatMetacontrollerNeverSends: a body Metacontroller's
// encoding/json would never write, though encoding/json reads it, is a
// one-line refusal naming the member, not a second reading of it.
func TestDecodeRefusesWhatMetacontrollerNeverSends(t *testing.T) {
	p := `"parent":{"metadata":{"name":"a"}}`
	for name, tc := range map[string]struct {
		body, want string
	}{
		"parent given twice":          {`{` + p + `,` + p + `}`, `decoding request: duplicate object member name "parent"`},
		"group given twice":           {`{` + p + `,"children":{"Service.v1":{"a":{}},"Service.v1":{"b":{}}}}`, `decoding request: duplicate object member name "Service.v1" within "/children"`},
		"object given twice":          {`{` + p + `,"related":{"Pod.v1":{"a":{},"a":{}}}}`, `decoding request: duplicate object member name "a" within "/related/Pod.v1"`},
		"a field given twice":         {`{` + p + `,"children":{"Service.v1":{"a":{"kind":"x","kind":"y"}}}}`, `decoding request: duplicate object member name "kind" within "/children/Service.v1/a"`},
		"a spec field given twice":    {`{"parent":{"metadata":{"name":"a"},"spec":{"type":"Service","type":"Job"}}}`, `decoding request: duplicate object member name "type" within "/parent/spec"`},
		"envelope name in other case": {`{"Parent":{"metadata":{"name":"a"}}}`, `decoding request: member "Parent": Metacontroller names it "parent"`},
		"related in other case":       {`{` + p + `,"RELATED":{}}`, `decoding request: member "RELATED": Metacontroller names it "related"`},
		"invalid UTF-8":               {"{" + p + ",\"children\":{\"Service.v1\":{\"a\":{\"kind\":\"\xff\"}}}}", `decoding request: invalid UTF-8 within "/children/Service.v1/a/kind"`},
	} {
		t.Run(name, func(t *testing.T) {
			require.NoError(t, json.Unmarshal([]byte(tc.body), new(metacontroller.SyncRequest)), "encoding/json reads it")
			var r Request
			err := Decode([]byte(tc.body), &r, NewCache(1<<20), Budget{})
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			var over *BudgetError
			require.False(t, errors.As(err, &over), "a refusal of the input, not of its size")
		})
	}
}

// TestCaseFoldedDuplicateInAnObject: two spellings of one field in a child
// are the same field given twice: the child does not decode, the error
// naming the member, and it reads as a child that does not decode (here the
// workload: an error).
func TestCaseFoldedDuplicateInAnObject(t *testing.T) {
	body := `{"parent":{"metadata":{"name":"a"}},"children":{"Deployment.apps/v1":{"a":{"status":{"readyReplicas":1,"ReadyReplicas":2}}}}}`
	var r Request
	require.NoError(t, Decode([]byte(body), &r, nil, Budget{}))
	_, found, err := r.child("Deployment.apps/v1", "", "a")
	require.True(t, found)
	require.ErrorContains(t, err, `duplicate object member name "ReadyReplicas"`)
}

// TestMetacontrollersRequestsAreCached: a golden request decoded a second
// time takes every object, and the body, from the Cache: the path FuzzDecode
// holds to encoding/json is the one the server takes.
func TestMetacontrollersRequestsAreCached(t *testing.T) {
	for name, b := range goldenRequests(t) {
		c := NewCache(16 << 20)
		var r Request
		require.NoError(t, Decode(b, &r, c, Budget{}), name)
		n := c.Len()
		require.Positive(t, n, "%s: nothing kept", name)
		walked := false
		require.NoError(t, DecodeAdmitted(b, &r, c, Budget{}, func(int) error { walked = true; return nil }), name)
		require.False(t, walked, "%s: walked again", name)
		require.Equal(t, n, c.Len(), "%s: decoded again", name)
	}
}
