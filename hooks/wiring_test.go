package hooks

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/netip"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/schema"
)

// wired is what a wiring answer says, compared whole.
type wired struct {
	Children []string // kind/name in answer order
	Slice    []string // addresses of the mirrored EndpointSlice
	Target   string   // the Middleware's service: namespace/name:port
	Refers   bool     // the IngressRoute uses the Middleware
}

func summarizeWiring(t *testing.T, children []any) wired {
	t.Helper()
	var w wired
	for _, c := range children {
		o := c.(object)
		md := o["metadata"].(object)
		w.Children = append(w.Children, o["kind"].(string)+"/"+md["name"].(string))
		switch o["kind"] {
		case "EndpointSlice":
			for _, e := range o["endpoints"].([]any) {
				for _, a := range e.(object)["addresses"].([]any) {
					w.Slice = append(w.Slice, a.(string))
				}
			}
		case "Middleware":
			s := o["spec"].(object)["errors"].(object)["service"].(object)
			ns, _ := s["namespace"].(string)
			w.Target = ns + "/" + s["name"].(string) + ":" + string(s["port"].(json.RawMessage))
		case "IngressRoute":
			for _, r := range o["spec"].(object)["routes"].([]any) {
				if _, ok := r.(object)["middlewares"]; ok {
					w.Refers = true
				}
			}
		}
	}
	return w
}

// TestWiringChildren walks the states of the error wiring: not installed,
// first answer, settled, the chart's Service gone or unreadable, a ClusterIP
// change, pages turned off (and the steps back), the opt-in cross-namespace
// Middleware and the move from it.
func TestWiringChildren(t *testing.T) {
	public := schema.Default(schema.Spec{Type: schema.TypeService, Image: "app:1", Host: "shop.example.com",
		Ports: []schema.Port{{Name: "http", Port: 8080, Public: true}}})
	off := false
	pagesOff := public
	pagesOff.ErrorPages = &schema.ErrorPages{Enabled: &off}
	private := schema.Default(schema.Spec{Type: schema.TypeService, Image: "app:1", Ports: []schema.Port{{Name: "http", Port: 8080}}})

	ip := func(s string) []netip.Addr { return []netip.Addr{netip.MustParseAddr(s)} }
	mirror := &serviceRef{Name: "web-error-pages", Port: json.RawMessage("8082")}
	cross := &serviceRef{Name: "stackdome-error-pages", Namespace: "stackdome", Port: json.RawMessage("8082")}
	settled := wiringView{related: seen(ip("10.96.0.17")...), slice: ip("10.96.0.17"), serviceObserved: true, middleware: mirror, routeRefers: true}
	all := []string{"Service/web-error-pages", "EndpointSlice/web-error-pages", "Middleware/web-errors", "IngressRoute/web"}
	crossCfg := DefaultConfig()
	crossCfg.ErrorService.CrossNamespace = true
	noPages := DefaultConfig()
	noPages.NoErrorService = true

	for name, tc := range map[string]struct {
		cfg  Config
		spec schema.Spec
		view wiringView
		want wired
	}{
		"no public port: no route, no wiring": {
			cfg: DefaultConfig(), spec: private, view: settled,
			want: wired{},
		},
		"not installed: the route alone": {
			cfg: DefaultConfig(), spec: public,
			want: wired{Children: []string{"IngressRoute/web"}},
		},
		"first answer: the wiring, not yet referred to": {
			cfg: DefaultConfig(), spec: public, view: wiringView{related: seen(ip("10.96.0.17")...)},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082"},
		},
		"slice observed without address: not referred to": {
			cfg: DefaultConfig(), spec: public, view: wiringView{related: seen(ip("10.96.0.17")...), serviceObserved: true, middleware: mirror},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082"},
		},
		"Service not observed: not referred to": {
			cfg: DefaultConfig(), spec: public, view: wiringView{related: seen(ip("10.96.0.17")...), slice: ip("10.96.0.17"), middleware: mirror},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082"},
		},
		"all observed: referred to": {
			cfg: DefaultConfig(), spec: public, view: wiringView{related: seen(ip("10.96.0.17")...), slice: ip("10.96.0.17"), serviceObserved: true, middleware: mirror},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082", Refers: true},
		},
		"settled": {
			cfg: DefaultConfig(), spec: public, view: settled,
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082", Refers: true},
		},
		"chart's Service gone (uninstalled, unreadable): the last addresses stay": {
			cfg: DefaultConfig(), spec: public, view: wiringView{slice: ip("10.96.0.17"), serviceObserved: true, middleware: mirror, routeRefers: true},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082", Refers: true},
		},
		"ClusterIP changed (reinstalled): the slice follows": {
			cfg: DefaultConfig(), spec: public, view: wiringView{related: seen(ip("10.96.0.99")...), slice: ip("10.96.0.17"), serviceObserved: true, middleware: mirror, routeRefers: true},
			want: wired{Children: all, Slice: []string{"10.96.0.99"}, Target: "/web-error-pages:8082", Refers: true},
		},
		"pages turned off: the reference goes first, the wiring stays": {
			cfg: noPages, spec: public, view: settled,
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082"},
		},
		"pages off, route no longer refers: the Middleware goes, its Service stays": {
			cfg: noPages, spec: public, view: wiringView{slice: ip("10.96.0.17"), serviceObserved: true, middleware: mirror},
			want: wired{Children: []string{"Service/web-error-pages", "EndpointSlice/web-error-pages", "IngressRoute/web"}, Slice: []string{"10.96.0.17"}},
		},
		"pages off, Middleware gone: the Service and slice go": {
			cfg: noPages, spec: public, view: wiringView{slice: ip("10.96.0.17"), serviceObserved: true},
			want: wired{Children: []string{"IngressRoute/web"}},
		},
		"spec turns pages off: the same steps": {
			cfg: DefaultConfig(), spec: pagesOff, view: settled,
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082"},
		},
		"cross-namespace opt-in, first answer": {
			cfg: crossCfg, spec: public,
			want: wired{Children: []string{"Middleware/web-errors", "IngressRoute/web"}, Target: "stackdome/stackdome-error-pages:8082"},
		},
		"cross-namespace opt-in, Middleware observed": {
			cfg: crossCfg, spec: public, view: wiringView{middleware: cross},
			want: wired{Children: []string{"Middleware/web-errors", "IngressRoute/web"}, Target: "stackdome/stackdome-error-pages:8082", Refers: true},
		},
		"from cross-namespace to the mirror: the Middleware waits for the Service": {
			cfg: DefaultConfig(), spec: public, view: wiringView{related: seen(ip("10.96.0.17")...), middleware: cross, routeRefers: true},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "stackdome/stackdome-error-pages:8082", Refers: true},
		},
		"from cross-namespace to the mirror, Service and slice observed: it moves": {
			cfg: DefaultConfig(), spec: public, view: wiringView{related: seen(ip("10.96.0.17")...), slice: ip("10.96.0.17"), serviceObserved: true, middleware: cross, routeRefers: true},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082"},
		},
		"from the mirror to cross-namespace: the mirror stays while the Middleware points there": {
			cfg: crossCfg, spec: public, view: settled,
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "stackdome/stackdome-error-pages:8082"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			got := summarizeWiring(t, wiringChildren(tc.cfg.withDefaults(), "web", tc.spec, tc.view))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("wiring (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWiringNeverEmptiesTheSlice drives every view with addresses known
// through every configuration: an answer that refers to the Middleware
// always carries it, the mirrored Service and a slice with an address.
func TestWiringNeverEmptiesTheSlice(t *testing.T) {
	spec := schema.Default(schema.Spec{Type: schema.TypeService, Image: "app:1", Host: "h.example.com",
		Ports: []schema.Port{{Name: "http", Port: 8080, Public: true}}})
	mirror := &serviceRef{Name: "web-error-pages", Port: json.RawMessage("8082")}
	addr := []netip.Addr{netip.MustParseAddr("10.96.0.17")}
	for _, related := range []relatedService{{}, {seen: true}, seen(addr...)} {
		for _, slice := range [][]netip.Addr{nil, addr} {
			for _, svc := range []bool{false, true} {
				for _, mw := range []*serviceRef{nil, mirror} {
					for _, refers := range []bool{false, true} {
						v := wiringView{related: related, slice: slice, serviceObserved: svc, middleware: mw, routeRefers: refers}
						w := summarizeWiring(t, wiringChildren(DefaultConfig(), "web", spec, v))
						if w.Refers {
							require.Contains(t, w.Children, "Middleware/web-errors", "%+v", v)
							require.Contains(t, w.Children, "Service/web-error-pages", "%+v", v)
							require.NotEmpty(t, w.Slice, "%+v", v)
						}
						if len(slice) > 0 && mw != nil {
							require.NotEmpty(t, w.Slice, "an observed slice with addresses, still pointed at, went empty: %+v", v)
						}
					}
				}
			}
		}
	}
}

// TestRelatedErrorService reads the ClusterIP of the chart's Service, reads
// one of an unexpected shape or without a usable address as seen without an
// address, and one of another name or namespace as not seen.
func TestRelatedErrorService(t *testing.T) {
	cfg := DefaultConfig()
	a17 := netip.MustParseAddr("10.96.0.17")
	for name, tc := range map[string]struct {
		key, raw string
		want     relatedService
	}{
		"v1 key":                  {key: "stackdome-error-pages", raw: `{"spec":{"clusterIP":"10.96.0.17","clusterIPs":["10.96.0.17"]}}`, want: seen(a17)},
		"v2 key":                  {key: "stackdome/stackdome-error-pages", raw: `{"metadata":{"namespace":"stackdome"},"spec":{"clusterIP":"10.96.0.17"}}`, want: seen(a17)},
		"primary family first":    {key: "stackdome-error-pages", raw: `{"spec":{"clusterIP":"10.96.0.17","clusterIPs":["fd00::17","10.96.0.17"]}}`, want: seen(netip.MustParseAddr("fd00::17"))},
		"other name":              {key: "other", raw: `{"spec":{"clusterIP":"10.96.0.17"}}`},
		"other namespace":         {key: "kube-system/stackdome-error-pages", raw: `{"spec":{"clusterIP":"10.96.0.17"}}`},
		"v1 key, other namespace": {key: "stackdome-error-pages", raw: `{"metadata":{"namespace":"shop"},"spec":{"clusterIP":"10.96.0.17"}}`},
		"headless":                {key: "stackdome-error-pages", raw: `{"spec":{"clusterIP":"None"}}`, want: seen()},
		"loopback":                {key: "stackdome-error-pages", raw: `{"spec":{"clusterIP":"127.0.0.1"}}`, want: seen()},
		"not an address":          {key: "stackdome-error-pages", raw: `{"spec":{"clusterIP":"ten"}}`, want: seen()},
		"spec a string":           {key: "stackdome-error-pages", raw: `{"spec":"10.96.0.17"}`, want: seen()},
		"clusterIP a number":      {key: "stackdome-error-pages", raw: `{"spec":{"clusterIP":17}}`, want: seen()},
		"not an object":           {key: "stackdome-error-pages", raw: `[1,2]`, want: seen()},
		"null":                    {key: "stackdome-error-pages", raw: `null`, want: seen()},
	} {
		t.Run(name, func(t *testing.T) {
			got := relatedErrorService(map[string]map[string]json.RawMessage{groupService: {tc.key: json.RawMessage(tc.raw)}}, cfg)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(relatedService{}), cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("related Service (-want +got):\n%s", diff)
			}
		})
	}
}

// relatedTemplate is the serving request (its wiring settled and observed)
// with the chart's error-page Service replaced by "@SVC@".
func relatedTemplate(tb testing.TB) []byte {
	var req map[string]any
	require.NoError(tb, json.Unmarshal(readFile(tb, filepath.Join("..", "testdata", "sync", "serving.request.json")), &req))
	req["related"].(map[string]any)["Service.v1"] = map[string]any{"stackdome-error-pages": "@SVC@"}
	b, err := json.Marshal(req)
	require.NoError(tb, err)
	return b
}

// withoutSlice is an answer's children without the mirrored EndpointSlice,
// and its status without the ErrorPages condition.
func withoutSlice(tb testing.TB, body []byte) string {
	var resp struct {
		Status   map[string]any    `json:"status"`
		Children []json.RawMessage `json:"children"`
	}
	require.NoError(tb, json.Unmarshal(body, &resp), string(body))
	var keep []json.RawMessage
	for _, c := range resp.Children {
		var k struct{ Kind string }
		require.NoError(tb, json.Unmarshal(c, &k))
		if k.Kind != "EndpointSlice" {
			keep = append(keep, c)
		}
	}
	var conds []any
	for _, c := range resp.Status["conditions"].([]any) {
		if c.(map[string]any)["type"] != string(schema.CondErrorPages) {
			conds = append(conds, c)
		}
	}
	resp.Status["conditions"] = conds
	b, err := json.Marshal(map[string]any{"status": resp.Status, "children": keep})
	require.NoError(tb, err)
	return string(b)
}

// FuzzRelatedErrorService puts arbitrary bytes where the chart's error-page
// Service goes in the serving request: whatever it is, the request is
// answered 200, the handler's one-pass path answers as Sync does, and nothing
// but the mirrored EndpointSlice's addresses may differ from the answer when
// no Service is related, but for the ErrorPages condition (bad input changes
// nothing else; the slice never empties: the observed address stays when the
// related one is unusable).
func FuzzRelatedErrorService(f *testing.F) {
	tmpl := relatedTemplate(f)
	var real map[string]any
	require.NoError(f, json.Unmarshal(readFile(f, filepath.Join("..", "testdata", "sync", "serving.request.json")), &real))
	svc, err := json.Marshal(real["related"].(map[string]any)["Service.v1"].(map[string]any)["stackdome-error-pages"])
	require.NoError(f, err)
	f.Add(svc)
	for _, s := range []string{`null`, `5`, `"svc"`, `[]`, `{}`, `{"spec":"10.96.0.1"}`, `{"spec":{"clusterIP":17}}`,
		`{"spec":{"clusterIP":"None"}}`, `{"spec":{"clusterIPs":["fd00::1"]}}`, `{"spec":{"clusterIPs":[]}}`, `{"spec":{"clusterIP":"127.0.0.1"}}`,
		`{"spec":{"clusterIP":"10.96.0.1"},"status":{"conditions":"x"}}`, `{"metadata":{"name":5},"spec":{"clusterIP":"10.96.0.1"}}`} {
		f.Add([]byte(s))
	}
	h := fuzzHandler()
	router := Router(h, nil, nil)
	base := post(f, router, "/sync", bytes.Replace(tmpl, []byte(`{"stackdome-error-pages":"@SVC@"}`), []byte(`{}`), 1))
	require.Equal(f, http.StatusOK, base.Code, base.Body.String())
	want := withoutSlice(f, base.Body.Bytes())
	f.Fuzz(func(t *testing.T, svc []byte) {
		body := bytes.Replace(tmpl, []byte(`"@SVC@"`), svc, 1)
		if !json.Valid(body) {
			return // not a request: FuzzSync covers those
		}
		w := requireSameAsSync(t, h, router, body)
		if w.Code != http.StatusOK {
			t.Fatalf("related Service %q: %d %s", svc, w.Code, w.Body)
		}
		if got := withoutSlice(t, w.Body.Bytes()); got != want {
			t.Fatalf("related Service %q changed more than the slice and the ErrorPages condition:\n got %s\nwant %s", svc, got, want)
		}
		var resp struct{ Children []map[string]any }
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &resp))
		found := false
		for _, c := range resp.Children {
			if c["kind"] == "EndpointSlice" {
				found = true
				require.NotEmpty(t, c["endpoints"], "related Service %q emptied the slice", svc)
			}
		}
		require.True(t, found, "related Service %q lost the slice", svc)
	})
}

// seen is a related error-page Service with the addresses as.
func seen(as ...netip.Addr) relatedService { return relatedService{seen: true, addrs: as} }
