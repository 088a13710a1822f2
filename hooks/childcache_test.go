package hooks

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/schema"
)

// TestChildCacheAnswersAsBuildChildren: a cached entry is exactly what
// buildChildren makes, on a miss and on a hit, and a different name or spec
// never gets another's children.
func TestChildCacheAnswersAsBuildChildren(t *testing.T) {
	cfg := DefaultConfig()
	var c childCache
	for i, name := range []string{"a", "b", "a"} {
		raw := fmt.Appendf(nil, `{"type":"Service","image":"img:%d","ports":[{"name":"http","port":80}]}`, i%2)
		var spec schema.Spec
		require.NoError(t, json.Unmarshal(raw, &spec))
		spec = schema.Default(spec)
		want, err := buildChildren(cfg, name, spec, claims{})
		require.NoError(t, err)
		wantJSON, err := json.Marshal(want.children)
		require.NoError(t, err)
		for range 2 { // a miss, then a hit
			got, err := c.get(cfg, name, raw, spec, claims{})
			require.NoError(t, err)
			if diff := cmp.Diff(string(wantJSON), string(got.json)); diff != "" {
				t.Fatalf("%s: cached children differ (-want +got):\n%s", name, diff)
			}
			require.Equal(t, want.revision, got.revision)
		}
	}
}

// TestChildCacheIsBounded: however many specs pass through, the cache holds
// at most maxCachedBytes, and a spec too big to share the cache is answered
// without being kept.
func TestChildCacheIsBounded(t *testing.T) {
	cfg := DefaultConfig()
	var c childCache
	spec := schema.Default(schema.Spec{Type: schema.TypeService, Image: "x"})
	for i := range 20000 {
		raw := fmt.Appendf(nil, `{"type":"Service","image":"x","n":%d}`, i)
		_, err := c.get(cfg, fmt.Sprintf("app-%d", i), raw, spec, claims{})
		require.NoError(t, err)
		require.LessOrEqual(t, c.size, maxCachedBytes, "after %d specs", i+1)
	}
	total := 0
	for k, e := range c.entries {
		total += len(k) + len(e.json)
	}
	require.Equal(t, total, c.size, "size accounts for exactly what is held")

	huge := []byte(`{"type":"Service","image":"x","pad":"` + strings.Repeat("p", maxCachedBytes/64) + `"}`)
	n := len(c.entries)
	_, err := c.get(cfg, "huge", huge, spec, claims{})
	require.NoError(t, err)
	require.Len(t, c.entries, n, "a huge spec is not cached")
}
