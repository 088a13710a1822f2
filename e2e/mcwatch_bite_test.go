//go:build e2e

package e2e

import (
	"strings"
	"testing"
)

// TestRouteCheckBites: the per-write route check (settleRoutable's replay)
// finds a route left referring to a deleted Middleware, after that one
// write and no other, and it replays the events in resourceVersion order
// whatever order the watches delivered them in. A new route created a
// moment before its Middleware has not served: it is not reported, and
// once routable it is held like any other.
func TestRouteCheckBites(t *testing.T) {
	const ns = "bite"
	ir := obj{"kind": "IngressRoute", "metadata": obj{"name": "app", "resourceVersion": "12"},
		"spec": obj{"routes": []any{obj{"middlewares": []any{obj{"name": "app-team"}}}}}}
	mw := obj{"kind": "Middleware", "metadata": obj{"name": "app-team", "resourceVersion": "11"}, "spec": obj{"headers": obj{}}}
	w := &nsWatch{ns: ns, events: []watchEvent{
		// Delivered out of order: the IngressRoute's watch first.
		{typ: "ADDED", resource: "ingressroutes", rv: 12, object: ir},
		{typ: "ADDED", resource: "middlewares", rv: 11, object: mw},
		{typ: "DELETED", resource: "middlewares", rv: 13, object: mw},
		{typ: "MODIFIED", resource: "ingressroutes", rv: 14, object: obj{"kind": "IngressRoute", "metadata": obj{"name": "app"}, "spec": obj{"routes": []any{obj{}}}}},
	}}
	got := w.replay(0, servedRoutesStay(ns))
	if len(got) != 1 || !strings.Contains(got[0], "after DELETED Middleware/app-team (rv 13)") {
		t.Fatalf("replay found %q, want exactly the route broken after the Middleware's deletion", got)
	}
	if got := w.replay(3, servedRoutesStay(ns)); len(got) != 0 {
		t.Fatalf("from the fix on, replay found %q, want nothing", got)
	}

	// A new resource's route before its Middleware, then the Middleware
	// deleted after it served.
	w = &nsWatch{ns: ns, events: []watchEvent{
		{typ: "ADDED", resource: "ingressroutes", rv: 21, object: ir},
		{typ: "ADDED", resource: "middlewares", rv: 22, object: mw},
		{typ: "DELETED", resource: "middlewares", rv: 23, object: mw},
	}}
	got = w.replay(0, servedRoutesStay(ns))
	if len(got) != 1 || !strings.Contains(got[0], "after DELETED Middleware/app-team (rv 23)") {
		t.Fatalf("replay found %q, want the served route broken by the deletion alone", got)
	}
	if got := w.replay(0, func(m mirror) error { return routable(m, ns) }); len(got) != 2 {
		t.Fatalf("routable on every write found %q, want the creation and the deletion", got)
	}
}
