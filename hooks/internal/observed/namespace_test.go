package observed

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParentNamespace: the namespace is read from the body's start, under
// the names Metacontroller gives it, and not before the prefix shows it.
func TestParentNamespace(t *testing.T) {
	tests := map[string]struct {
		prefix string
		ns     string
		ok     bool
	}{
		"metacontroller's order":   {prefix: `{"controller":{"kind":"CompositeController","spec":{"x":[1,{"y":"}"}]}},"parent":{"apiVersion":"v1","metadata":{"annotations":{"namespace":"no"},"name":"a","namespace":"shop"},"spec":`, ns: "shop", ok: true},
		"names in another case":    {prefix: `{"Parent":{"Metadata":{"NAMESPACE":"shop"}}}`}, // refused
		"escaped":                  {prefix: `{"parent":{"metadata":{"namespace":"sh\u006fp"}}}`, ns: "shop", ok: true},
		"cut inside the parent":    {prefix: `{"controller":{},"parent":{"metadata":{"name":"a","names`},
		"cut inside a value":       {prefix: `{"controller":{"spec":{"a":"b`},
		"parent without one":       {prefix: `{"parent":{"metadata":{"name":"a"}},"children":`, ok: true},
		"null metadata":            {prefix: `{"parent":{"metadata":null,`, ok: true},
		"not an object":            {prefix: `[1,2]`},
		"a namespace not a string": {prefix: `{"parent":{"metadata":{"namespace":7}}}`},
		"the parent after":         {prefix: `{"children":{},"related":{},"parent":{"metadata":{"namespace":"late"}}}`, ns: "late", ok: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ns, ok := ParentNamespace([]byte(tc.prefix))
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.ns, ns)
		})
	}
}
