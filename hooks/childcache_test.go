package hooks

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"reflect"
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

// TestWiredKeySeesEveryField: the routing children are cached by the
// wiring view's key, so a view that differs in any field must differ in key,
// or a sync would be answered with another view's children. A field added
// to the views without a place in the key fails here.
func TestWiredKeySeesEveryField(t *testing.T) {
	require.Equal(t, 6, reflect.TypeFor[wiringView]().NumField(), "a new wiringView field needs its place in key()")
	require.Equal(t, 4, reflect.TypeFor[routesView]().NumField(), "a new routesView field needs its place in key()")
	a := netip.MustParseAddr("10.96.0.10")
	b := netip.MustParseAddr("10.96.0.11")
	ref := &serviceRef{Name: "x", Port: json.RawMessage("8082")}
	views := map[string]wiringView{
		"zero":               {},
		"related":            {related: seen(a)},
		"related other":      {related: seen(b)},
		"slice":              {slice: []netip.Addr{a}},
		"service":            {serviceObserved: true},
		"middleware":         {middleware: ref},
		"middleware ns":      {middleware: &serviceRef{Name: "x", Namespace: "n", Port: json.RawMessage("8082")}},
		"middleware port":    {middleware: &serviceRef{Name: "x", Port: json.RawMessage(`"errors"`)}},
		"route refers":       {routeRefers: true},
		"strip":              {routes: routesView{strip: []string{"/a"}}},
		"strip empty":        {routes: routesView{strip: []string{}}},
		"strip other":        {routes: routesView{strip: []string{"/b"}}},
		"https":              {routes: routesView{httpsObserved: true}},
		"route strips":       {routes: routesView{routeStrips: true}},
		"redirect refers":    {routes: routesView{redirectRefers: true}},
		"related then slice": {related: seen(a), slice: []netip.Addr{b}},
		"slice then related": {related: seen(b), slice: []netip.Addr{a}},
	}
	seen := map[string]string{}
	for name, v := range views {
		k := v.key()
		if other, ok := seen[k]; ok {
			t.Errorf("%s and %s have the same key %q", name, other, k)
		}
		seen[k] = name
	}
}

// TestWiredIsWiringChildren: the cached routing children are exactly what
// wiringChildren makes, on a miss and on a hit, for every view.
func TestWiredIsWiringChildren(t *testing.T) {
	cfg := DefaultConfig().withDefaults()
	raw := []byte(`{"type":"Service","image":"i","host":"a.example.com","ports":[{"name":"http","port":80,"public":true},{"name":"admin","port":81,"public":true}],"tls":{}}`)
	var spec schema.Spec
	require.NoError(t, json.Unmarshal(raw, &spec))
	spec = schema.Default(spec)
	addr := netip.MustParseAddr("10.96.0.10")
	var c childCache
	for _, v := range []wiringView{{}, {related: seen(addr)}, {related: seen(addr), slice: []netip.Addr{addr}, serviceObserved: true,
		middleware: &serviceRef{Name: "a-error-pages", Port: json.RawMessage("8082")}, routes: routesView{strip: []string{"/admin"}, httpsObserved: true}}} {
		want, err := json.Marshal(nonNil(wiringChildren(cfg, "a", spec, v)))
		require.NoError(t, err)
		for range 2 {
			got, err := c.wired(cfg, "a", raw, spec, v)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got))
		}
	}
}
