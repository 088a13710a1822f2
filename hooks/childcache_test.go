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

	"github.com/stackdome/stackdome/hooks/internal/children"
	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// TestChildCacheAnswersAsBuildChildren: a cached entry is exactly what
// children.Build makes, on a miss and on a hit, and a different name or spec
// never gets another's children.
func TestChildCacheAnswersAsBuildChildren(t *testing.T) {
	cfg := DefaultConfig().withDefaults().children()
	var c childCache
	for i, name := range []string{"a", "b", "a"} {
		raw := fmt.Appendf(nil, `{"type":"Service","image":"img:%d","ports":[{"name":"http","port":80}]}`, i%2)
		var spec schema.Spec
		require.NoError(t, json.Unmarshal(raw, &spec))
		spec = schema.Default(spec)
		for _, digest := range []string{"", "d1"} { // another config digest is another entry
			want, err := children.Build(cfg, name, spec, children.Claims{}, digest)
			require.NoError(t, err)
			wantJSON, err := json.Marshal(want.Children)
			require.NoError(t, err)
			for range 2 { // a miss, then a hit
				rev, got, err := c.own(cfg, "apps", name, raw, spec, children.Claims{}, digest)
				require.NoError(t, err)
				if diff := cmp.Diff(string(wantJSON), string(got.encoded)); diff != "" {
					t.Fatalf("%s %q: cached children differ (-want +got):\n%s", name, digest, diff)
				}
				require.Equal(t, want.Revision, rev)
			}
		}
	}
}

// TestChildCacheIsBounded: however many specs pass through, the cache holds
// at most maxCachedBytes, and a spec too big to share the cache is answered
// without being kept.
func TestChildCacheIsBounded(t *testing.T) {
	cfg := DefaultConfig().withDefaults().children()
	var c childCache
	spec := schema.Default(schema.Spec{Type: schema.TypeService, Image: "x"})
	for i := range 20000 {
		raw := fmt.Appendf(nil, `{"type":"Service","image":"x","n":%d}`, i)
		_, _, err := c.own(cfg, "apps", fmt.Sprintf("app-%d", i), raw, spec, children.Claims{}, "")
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
	_, _, err := c.own(cfg, "apps", "huge", huge, spec, children.Claims{}, "")
	require.NoError(t, err)
	require.Len(t, c.entries, n, "a huge spec is not cached")
}

// TestWiredKeySeesEveryField: the routing children are cached by the
// wiring view's key, so a view that differs in any field must differ in key,
// or a sync would be answered with another view's children. A field added
// to the views without a place in the key fails here.
func TestWiredKeySeesEveryField(t *testing.T) {
	require.Equal(t, 11, reflect.TypeFor[observed.Wiring]().NumField(), "a new observed.Wiring field needs its place in Key()")
	require.Equal(t, 5, reflect.TypeFor[observed.Routes]().NumField(), "a new observed.Routes field needs its place in Key()")
	a := netip.MustParseAddr("10.96.0.10")
	b := netip.MustParseAddr("10.96.0.11")
	ref := &observed.ServiceRef{Name: "x", Port: json.RawMessage("8082")}
	views := map[string]observed.Wiring{
		"zero":                {},
		"related":             {Related: seen(a)},
		"related other":       {Related: seen(b)},
		"slice":               {Slice: []netip.Addr{a}},
		"slice observed":      {SliceObserved: true},
		"service":             {ServiceObserved: true},
		"middleware observed": {MiddlewareObserved: true},
		"settle open":         {SettleOpen: true},
		"middleware":          {Middleware: ref},
		"middleware ns":       {Middleware: &observed.ServiceRef{Name: "x", Namespace: "n", Port: json.RawMessage("8082")}},
		"middleware port":     {Middleware: &observed.ServiceRef{Name: "x", Port: json.RawMessage(`"errors"`)}},
		"route refers":        {RouteRefers: true},
		"route observed":      {RouteObserved: true},
		"first sync":          {First: true},
		"strip":               {Routes: observed.Routes{Strip: []string{"/a"}}},
		"strip empty":         {Routes: observed.Routes{Strip: []string{}}},
		"strip other":         {Routes: observed.Routes{Strip: []string{"/b"}}},
		"https":               {Routes: observed.Routes{HTTPSObserved: true}},
		"route strips":        {Routes: observed.Routes{RouteStrips: true}},
		"redirect refers":     {Routes: observed.Routes{RedirectRefers: true}},
		"team middleware":     {Routes: observed.Routes{Middlewares: []string{"auth"}}},
		"team middlewares":    {Routes: observed.Routes{Middlewares: []string{"auth", "limit"}}},
		"team other order":    {Routes: observed.Routes{Middlewares: []string{"limit", "auth"}}},
		"related then slice":  {Related: seen(a), Slice: []netip.Addr{b}},
		"slice then related":  {Related: seen(b), Slice: []netip.Addr{a}},
	}
	seen := map[string]string{}
	for name, v := range views {
		k := v.Key()
		if other, ok := seen[k]; ok {
			t.Errorf("%s and %s have the same key %q", name, other, k)
		}
		seen[k] = name
	}
}

// TestWiredIsWiringChildren: the cached routing children are exactly what
// children.Routing makes, on a miss and on a hit, for every view.
func TestWiredIsWiringChildren(t *testing.T) {
	cfg := DefaultConfig().withDefaults().children()
	raw := []byte(`{"type":"Service","image":"i","host":"a.example.com","ports":[{"name":"http","port":80,"public":true},{"name":"admin","port":81,"public":true}],"tls":{}}`)
	var spec schema.Spec
	require.NoError(t, json.Unmarshal(raw, &spec))
	spec = schema.Default(spec)
	addr := netip.MustParseAddr("10.96.0.10")
	var c childCache
	for _, v := range []observed.Wiring{{}, {Related: seen(addr)}, {Related: seen(addr), Slice: []netip.Addr{addr}, ServiceObserved: true,
		Middleware: &observed.ServiceRef{Name: "a-error-pages", Port: json.RawMessage("8082")}, Routes: observed.Routes{Strip: []string{"/admin"}, HTTPSObserved: true}}} {
		objs, err := children.Routing(cfg, "a", spec, v)
		require.NoError(t, err)
		if objs == nil {
			objs = []any{}
		}
		want, err := json.Marshal(objs)
		require.NoError(t, err)
		for range 2 {
			got, err := c.routing(cfg, "a", raw, spec, v)
			require.NoError(t, err)
			require.Equal(t, string(want), string(got.encoded))
		}
	}
}

// seen is a related error-page Service with the addresses as.
func seen(as ...netip.Addr) observed.RelatedService {
	return observed.RelatedService{Seen: true, Addrs: as}
}
