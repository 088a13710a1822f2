package children

import (
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/hooks/internal/observed"
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
// Middleware and the move from it, and a route that refers to what a sync
// does not show yet: kept inside the settle window, let go past it.
func TestWiringChildren(t *testing.T) {
	public := schema.Default(schema.Spec{Type: schema.TypeService, Image: "app:1", Host: "shop.example.com",
		Ports: []schema.Port{{Name: "http", Port: 8080, Public: true}}})
	off := false
	pagesOff := public
	pagesOff.ErrorPages = &schema.ErrorPages{Enabled: &off}
	private := schema.Default(schema.Spec{Type: schema.TypeService, Image: "app:1", Ports: []schema.Port{{Name: "http", Port: 8080}}})

	ip := func(s string) []netip.Addr { return []netip.Addr{netip.MustParseAddr(s)} }
	mirror := &observed.ServiceRef{Name: "web-error-pages", Port: json.RawMessage("8082")}
	cross := &observed.ServiceRef{Name: "stackdome-error-pages", Namespace: "stackdome", Port: json.RawMessage("8082")}
	settled := observed.Wiring{Related: seen(ip("10.96.0.17")...), Slice: ip("10.96.0.17"), ServiceObserved: true, Middleware: mirror, RouteRefers: true}
	all := []string{"Service/web-error-pages", "EndpointSlice/web-error-pages", "Middleware/web-errors", "IngressRoute/web"}
	crossCfg := testConfig()
	crossCfg.ErrorService.CrossNamespace = true
	noPages := testConfig()
	noPages.NoErrorService = true

	for name, tc := range map[string]struct {
		cfg  Config
		spec schema.Spec
		view observed.Wiring
		want wired
	}{
		"no public port: no route, no wiring": {
			cfg: testConfig(), spec: private, view: settled,
			want: wired{},
		},
		"not installed: the route alone": {
			cfg: testConfig(), spec: public,
			want: wired{Children: []string{"IngressRoute/web"}},
		},
		"not installed, a new resource: the route alone": {
			cfg: testConfig(), spec: public, view: observed.Wiring{First: true},
			want: wired{Children: []string{"IngressRoute/web"}},
		},
		"a new resource: the wiring and the route that refers to it, in one answer": {
			cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(ip("10.96.0.17")...), First: true},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082", Refers: true},
		},
		"first sync again with the route observed (the status not in the request yet): as any route": {
			cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(ip("10.96.0.17")...), First: true, RouteObserved: true},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082"},
		},
		"the wiring not observed, a resource with a status: not yet referred to": {
			cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(ip("10.96.0.17")...)},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082"},
		},
		"the Middleware refused (not observed past the settle window): the route drops the reference it was created with": {
			cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(ip("10.96.0.17")...), Slice: ip("10.96.0.17"), ServiceObserved: true, RouteObserved: true, RouteRefers: true},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082"},
		},
		"the Middleware not observed yet, inside the settle window: the route keeps the reference it was created with": {
			cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(ip("10.96.0.17")...), Slice: ip("10.96.0.17"), ServiceObserved: true, RouteObserved: true, RouteRefers: true, SettleOpen: true},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082", Refers: true},
		},
		"the mirrored Service not observed yet, inside the settle window: kept": {
			cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(ip("10.96.0.17")...), Slice: ip("10.96.0.17"), Middleware: mirror, RouteObserved: true, RouteRefers: true, SettleOpen: true},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082", Refers: true},
		},
		"the mirrored slice not observed yet, inside the settle window: kept": {
			cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(ip("10.96.0.17")...), ServiceObserved: true, Middleware: mirror, RouteObserved: true, RouteRefers: true, SettleOpen: true},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082", Refers: true},
		},
		"the parent's status and the Middleware not in the request yet, inside the settle window: kept": {
			cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(ip("10.96.0.17")...), Slice: ip("10.96.0.17"), ServiceObserved: true, First: true, RouteObserved: true, RouteRefers: true, SettleOpen: true},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082", Refers: true},
		},
		"an observed slice without an address, inside the settle window: not an absence, the reference goes": {
			cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(ip("10.96.0.17")...), SliceObserved: true, ServiceObserved: true, Middleware: mirror, RouteObserved: true, RouteRefers: true, SettleOpen: true},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082"},
		},
		"an observed Middleware that cannot be read, inside the settle window: not an absence, the reference goes": {
			cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(ip("10.96.0.17")...), Slice: ip("10.96.0.17"), ServiceObserved: true, MiddlewareObserved: true, RouteObserved: true, RouteRefers: true, SettleOpen: true},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082"},
		},
		"cross-namespace opt-in, the Middleware not observed yet, inside the settle window: kept": {
			cfg: crossCfg, spec: public, view: observed.Wiring{RouteObserved: true, RouteRefers: true, SettleOpen: true},
			want: wired{Children: []string{"Middleware/web-errors", "IngressRoute/web"}, Target: "stackdome/stackdome-error-pages:8082", Refers: true},
		},
		"slice observed without address: not referred to": {
			cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(ip("10.96.0.17")...), ServiceObserved: true, Middleware: mirror},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082"},
		},
		"Service not observed: not referred to": {
			cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(ip("10.96.0.17")...), Slice: ip("10.96.0.17"), Middleware: mirror},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082"},
		},
		"all observed: referred to": {
			cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(ip("10.96.0.17")...), Slice: ip("10.96.0.17"), ServiceObserved: true, Middleware: mirror},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082", Refers: true},
		},
		"settled": {
			cfg: testConfig(), spec: public, view: settled,
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082", Refers: true},
		},
		"chart's Service gone (uninstalled, unreadable): the last addresses stay": {
			cfg: testConfig(), spec: public, view: observed.Wiring{Slice: ip("10.96.0.17"), ServiceObserved: true, Middleware: mirror, RouteRefers: true},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082", Refers: true},
		},
		"ClusterIP changed (reinstalled): the slice follows": {
			cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(ip("10.96.0.99")...), Slice: ip("10.96.0.17"), ServiceObserved: true, Middleware: mirror, RouteRefers: true},
			want: wired{Children: all, Slice: []string{"10.96.0.99"}, Target: "/web-error-pages:8082", Refers: true},
		},
		"pages turned off: the reference goes first, the wiring stays": {
			cfg: noPages, spec: public, view: settled,
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082"},
		},
		"pages off, route no longer refers: the Middleware goes, its Service stays": {
			cfg: noPages, spec: public, view: observed.Wiring{Slice: ip("10.96.0.17"), ServiceObserved: true, Middleware: mirror},
			want: wired{Children: []string{"Service/web-error-pages", "EndpointSlice/web-error-pages", "IngressRoute/web"}, Slice: []string{"10.96.0.17"}},
		},
		"pages off, Middleware gone: the Service and slice go": {
			cfg: noPages, spec: public, view: observed.Wiring{Slice: ip("10.96.0.17"), ServiceObserved: true},
			want: wired{Children: []string{"IngressRoute/web"}},
		},
		"spec turns pages off: the same steps": {
			cfg: testConfig(), spec: pagesOff, view: settled,
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082"},
		},
		"cross-namespace opt-in, first answer": {
			cfg: crossCfg, spec: public,
			want: wired{Children: []string{"Middleware/web-errors", "IngressRoute/web"}, Target: "stackdome/stackdome-error-pages:8082"},
		},
		"cross-namespace opt-in, a new resource": {
			cfg: crossCfg, spec: public, view: observed.Wiring{First: true},
			want: wired{Children: []string{"Middleware/web-errors", "IngressRoute/web"}, Target: "stackdome/stackdome-error-pages:8082", Refers: true},
		},
		"cross-namespace opt-in, Middleware observed": {
			cfg: crossCfg, spec: public, view: observed.Wiring{Middleware: cross},
			want: wired{Children: []string{"Middleware/web-errors", "IngressRoute/web"}, Target: "stackdome/stackdome-error-pages:8082", Refers: true},
		},
		"from cross-namespace to the mirror: the Middleware waits for the Service": {
			cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(ip("10.96.0.17")...), Middleware: cross, RouteRefers: true},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "stackdome/stackdome-error-pages:8082", Refers: true},
		},
		"from cross-namespace to the mirror, Service and slice observed: it moves (the settle window is for absences only)": {
			cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(ip("10.96.0.17")...), Slice: ip("10.96.0.17"), ServiceObserved: true, Middleware: cross, RouteRefers: true, SettleOpen: true},
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "/web-error-pages:8082"},
		},
		"from the mirror to cross-namespace: the mirror stays while the Middleware points there": {
			cfg: crossCfg, spec: public, view: settled,
			want: wired{Children: all, Slice: []string{"10.96.0.17"}, Target: "stackdome/stackdome-error-pages:8082"},
		},
	} {
		t.Run(name, func(t *testing.T) {
			// What a request shows is observed: the table leaves the flags
			// out where the values say it.
			tc.view.SliceObserved = tc.view.SliceObserved || len(tc.view.Slice) > 0
			tc.view.MiddlewareObserved = tc.view.MiddlewareObserved || tc.view.Middleware != nil
			got := summarizeWiring(t, routing(t, tc.cfg, "web", tc.spec, tc.view))
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
	mirror := &observed.ServiceRef{Name: "web-error-pages", Port: json.RawMessage("8082")}
	addr := []netip.Addr{netip.MustParseAddr("10.96.0.17")}
	for _, related := range []observed.RelatedService{{}, {Seen: true}, seen(addr...)} {
		for _, slice := range [][]netip.Addr{nil, addr} {
			for _, svc := range []bool{false, true} {
				for _, mw := range []*observed.ServiceRef{nil, mirror} {
					for _, refers := range []bool{false, true} {
						for _, open := range []bool{false, true} {
							v := observed.Wiring{Related: related, Slice: slice, SliceObserved: slice != nil, ServiceObserved: svc, Middleware: mw, MiddlewareObserved: mw != nil, RouteRefers: refers, SettleOpen: open}
							w := summarizeWiring(t, routing(t, testConfig(), "web", spec, v))
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
}

// seen is a related error-page Service with the addresses as.
func seen(as ...netip.Addr) observed.RelatedService {
	return observed.RelatedService{Seen: true, Addrs: as}
}
