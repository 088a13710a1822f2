package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// firstMismatch returns the path of the first place where got does not hold
// want exactly, and what differs there; "" when want is a subset of got.
//
// Objects: every key of want must be in got with a matching value; extra keys
// in got are what the server adds (defaults, metadata) and are allowed.
// Arrays: same length, element by element. Scalars, including null, must be
// equal in type and in their JSON spelling, so 1 differs from 1.0 and "0.5"
// from "500m". Values are decoded with json.Number (see decodeJSON).
//
// This is the check that stands for Metacontroller's: a field we send that the
// server stores differently is a child updated, or a status written, on every
// sync.
func firstMismatch(path string, want, got any) (string, string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, fmt.Sprintf("sent an object, stored %s", describe(got))
		}
		for _, k := range sortedKeys(w) {
			gv, ok := g[k]
			if !ok {
				return joinPath(path, k), fmt.Sprintf("sent %s, not stored (pruned or dropped)", describe(w[k]))
			}
			if p, why := firstMismatch(joinPath(path, k), w[k], gv); p != "" {
				return p, why
			}
		}
		return "", ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			return path, fmt.Sprintf("sent an array, stored %s", describe(got))
		}
		if len(w) != len(g) {
			return path, fmt.Sprintf("sent %d items, stored %d", len(w), len(g))
		}
		for i := range w {
			if p, why := firstMismatch(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); p != "" {
				return p, why
			}
		}
		return "", ""
	default:
		if !sameScalar(want, got) {
			return path, fmt.Sprintf("sent %s, stored %s", describe(want), describe(got))
		}
		return "", ""
	}
}

func sameScalar(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case json.Number:
		bn, ok := b.(json.Number)
		return ok && a == bn
	case string, bool:
		return a == b
	default:
		return false
	}
}

func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return fmt.Sprintf("%q", v)
	default:
		return fmt.Sprintf("%v", v)
	}
}

func joinPath(path, key string) string {
	if strings.ContainsAny(key, "./[]") {
		return fmt.Sprintf("%s[%q]", path, key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// decodeJSON decodes with json.Number so integers stay distinguishable.
func decodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	return dec.Decode(v)
}

func TestFirstMismatch(t *testing.T) {
	cases := map[string]struct {
		want, got string
		path      string
	}{
		"equal":                  {`{"a":1}`, `{"a":1}`, ""},
		"server adds fields":     {`{"a":{"b":1}}`, `{"a":{"b":1,"c":2},"d":3}`, ""},
		"normalized quantity":    {`{"spec":{"cpu":"0.5"}}`, `{"spec":{"cpu":"500m"}}`, "spec.cpu"},
		"pruned field":           {`{"status":{"x":1,"y":2}}`, `{"status":{"x":1}}`, "status.y"},
		"dropped null":           {`{"a":null}`, `{}`, "a"},
		"null kept":              {`{"a":null}`, `{"a":null}`, ""},
		"integer became float":   {`{"n":1}`, `{"n":1.0}`, "n"},
		"string vs number":       {`{"p":"8080"}`, `{"p":8080}`, "p"},
		"list item differs":      {`{"l":[{"n":"a"},{"n":"b"}]}`, `{"l":[{"n":"a","x":1},{"n":"c"}]}`, "l[1].n"},
		"list length":            {`{"l":[1]}`, `{"l":[1,2]}`, "l"},
		"dotted key":             {`{"labels":{"app.kubernetes.io/name":"x"}}`, `{"labels":{}}`, `labels["app.kubernetes.io/name"]`},
		"empty object is stored": {`{"a":{}}`, `{"a":{}}`, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var want, got any
			if err := decodeJSON([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if err := decodeJSON([]byte(tc.got), &got); err != nil {
				t.Fatal(err)
			}
			path, why := firstMismatch("", want, got)
			if path != tc.path {
				t.Errorf("firstMismatch = %q (%s), want %q", path, why, tc.path)
			}
		})
	}
}
