package e2e

// framework.FirstMismatch on cases of its own. No build tag: it runs in
// `make test`, so framework/jsonmatch.go has none either.

import (
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

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
			if err := framework.DecodeJSON([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if err := framework.DecodeJSON([]byte(tc.got), &got); err != nil {
				t.Fatal(err)
			}
			path, why := framework.FirstMismatch("", want, got)
			if path != tc.path {
				t.Errorf("FirstMismatch = %q (%s), want %q", path, why, tc.path)
			}
		})
	}
}
