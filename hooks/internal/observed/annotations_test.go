package observed

import (
	"encoding/json"
	"testing"
)

// FuzzAnnotations: Annotations accept what a map[string]string accepts,
// under encoding/json and the fast decoder alike, and Get reads what the
// map holds: a duplicate "annotations" adds to the first, a null empties it.
func FuzzAnnotations(f *testing.F) {
	for _, s := range []string{
		`{"annotations":{"a":"1","b":null}}`,
		`{"annotations":{"a":"1"},"annotations":{"b":"2","a":"3"}}`,
		`{"annotations":{"a":"1","c":"4"},"annotations":{"b":"2"}}`,
		`{"annotations":{"a":"1"},"annotations":null,"Annotations":{"b":"2"}}`,
		`{"annotations":{"a":1}}`,
		`{"annotations":["a"]}`,
		`{"annotations":"a"}`,
		`{"annotations":{"a\u00e9":"x\"}\\","b":{}}}`,
		`{"annotations" : { "a" : "\ud800" , "b" : "" } }`,
		`{"annotations":{}}`,
	} {
		f.Add([]byte(s), "a")
	}
	f.Fuzz(func(t *testing.T, b []byte, key string) {
		var want struct {
			A map[string]string `json:"annotations"`
		}
		var got, fast struct {
			A Annotations `json:"annotations"`
		}
		werr := json.Unmarshal(b, &want)
		gerr := json.Unmarshal(b, &got)
		ferr := unmarshalFast(b, &fast)
		if (werr == nil) != (gerr == nil) || (werr == nil) != (ferr == nil) {
			t.Fatalf("%q: a map says %v, Annotations %v, the fast decoder %v", b, werr, gerr, ferr)
		}
		if werr != nil {
			return
		}
		for k, v := range want.A {
			for _, a := range []Annotations{got.A, fast.A} {
				if w, ok := a.Get(k); !ok || w != v {
					t.Fatalf("%q: Get(%q) = %q, %v; the map holds %q", b, k, w, ok, v)
				}
			}
		}
		v, ok := want.A[key]
		for _, a := range []Annotations{got.A, fast.A} {
			if w, wok := a.Get(key); w != v || wok != ok {
				t.Fatalf("%q: Get(%q) = %q, %v; the map gives %q, %v", b, key, w, wok, v, ok)
			}
		}
	})
}
