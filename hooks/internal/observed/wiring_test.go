package observed

import (
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackdome/stackdome/metacontroller"
)

// TestViewWiringObserved: the view tells a child the request does not show
// from one it shows in a state of its own (a slice without an address, a
// Middleware whose service cannot be read): only the first is an absence
// the settle window waits out (children/wiring.go).
func TestViewWiringObserved(t *testing.T) {
	ip := netip.MustParseAddr("10.96.0.17")
	route := `{"metadata":{"name":"web"},"spec":{"routes":[{"middlewares":[{"name":"web-errors"}]}]}}`
	for name, tc := range map[string]struct {
		children map[string]map[string]string // group → name → raw object
		want     Wiring
	}{
		"nothing observed": {},
		"the route alone, referring": {
			children: map[string]map[string]string{groupIngressRoute: {"web": route}},
			want:     Wiring{RouteObserved: true, RouteRefers: true},
		},
		"everything observed": {
			children: map[string]map[string]string{
				groupIngressRoute:  {"web": route},
				groupMiddleware:    {"web-errors": `{"metadata":{"name":"web-errors"},"spec":{"errors":{"service":{"name":"web-error-pages","port":8082}}}}`},
				groupService:       {"web-error-pages": `{"metadata":{"name":"web-error-pages"}}`},
				groupEndpointSlice: {"web-error-pages": `{"metadata":{"name":"web-error-pages"},"endpoints":[{"addresses":["10.96.0.17"]}]}`},
			},
			want: Wiring{Slice: []netip.Addr{ip}, SliceObserved: true, ServiceObserved: true,
				Middleware: &ServiceRef{Name: "web-error-pages", Port: json.RawMessage("8082")}, MiddlewareObserved: true, RouteObserved: true, RouteRefers: true},
		},
		"a slice without an address, a Middleware without a service": {
			children: map[string]map[string]string{
				groupMiddleware:    {"web-errors": `{"metadata":{"name":"web-errors"},"spec":{"errors":{}}}`},
				groupEndpointSlice: {"web-error-pages": `{"metadata":{"name":"web-error-pages"},"endpoints":[]}`},
			},
			want: Wiring{SliceObserved: true, MiddlewareObserved: true},
		},
	} {
		t.Run(name, func(t *testing.T) {
			sr := &metacontroller.SyncRequest{Parent: json.RawMessage(`{}`), Children: map[string]map[string]json.RawMessage{}}
			for g, objs := range tc.children {
				sr.Children[g] = map[string]json.RawMessage{}
				for n, raw := range objs {
					sr.Children[g][n] = json.RawMessage(raw)
				}
			}
			req := FromSyncRequest(sr)
			got := viewWiring("web", "shop", req.lookup("shop"), RelatedService{})
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("view (-want +got):\n%s", diff)
			}
		})
	}
}
