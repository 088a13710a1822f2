//go:build e2e

package node

import (
	"strings"
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestRouteCheckBites: the per-write route check (the replay of the
// framework's RouteWatch.RequireRoutesStay) finds a route left referring to a deleted Middleware, after that
// one write and no other, and it replays the events in resourceVersion
// order whatever order the watches delivered them in (Merged). A new route
// created a moment before its Middleware has not served: it is not
// reported, and once routable it is held like any other.
func TestRouteCheckBites(t *testing.T) {
	const ns = "bite"
	ir := obj{"kind": "IngressRoute", "metadata": obj{"name": "app"},
		"spec": obj{"routes": []any{obj{"middlewares": []any{obj{"name": "app-team"}}}}}}
	mw := obj{"kind": "Middleware", "metadata": obj{"name": "app-team"}, "spec": obj{"headers": obj{}}}
	fixed := obj{"kind": "IngressRoute", "metadata": obj{"name": "app"}, "spec": obj{"routes": []any{obj{}}}}
	// Delivered out of order: the IngressRoute's watch first.
	routes := framework.RecordedWatcher("route", []framework.WatchEvent{
		{Kind: "route", Type: "ADDED", RV: 12, Obj: ir},
		{Kind: "route", Type: "MODIFIED", RV: 14, Obj: fixed},
	}...)
	mws := framework.RecordedWatcher("middleware", []framework.WatchEvent{
		{Kind: "middleware", Type: "ADDED", RV: 11, Obj: mw},
		{Kind: "middleware", Type: "DELETED", RV: 13, Obj: mw},
	}...)
	rw := &framework.RouteWatch{NS: ns, WS: []*framework.Watcher{routes, mws}}
	got := framework.ReplayRoutes(framework.Merged(rw.WS...), 0, framework.ServedRoutesStay(ns))
	if len(got) != 1 || !strings.Contains(got[0], "after DELETED middleware/app-team (rv 13)") {
		t.Fatalf("replay found %q, want exactly the route broken after the Middleware's deletion", got)
	}
	if got := framework.ReplayRoutes(framework.Merged(rw.WS...), 13, framework.ServedRoutesStay(ns)); len(got) != 0 {
		t.Fatalf("from the fix on, replay found %q, want nothing", got)
	}
	if m := rw.Mark(); m != 14 {
		t.Fatalf("mark = %d, want 14, the newest write delivered", m)
	}

	// A new resource's route before its Middleware, then the Middleware
	// deleted after it served.
	events := []framework.WatchEvent{
		{Kind: "route", Type: "ADDED", RV: 21, Obj: ir},
		{Kind: "middleware", Type: "ADDED", RV: 22, Obj: mw},
		{Kind: "middleware", Type: "DELETED", RV: 23, Obj: mw},
	}
	got = framework.ReplayRoutes(events, 0, framework.ServedRoutesStay(ns))
	if len(got) != 1 || !strings.Contains(got[0], "after DELETED middleware/app-team (rv 23)") {
		t.Fatalf("replay found %q, want the served route broken by the deletion alone", got)
	}
	every := func(m framework.RouteMirror) error {
		for _, ir := range m["route"] {
			if err := framework.RouteRoutable(m, ns, ir); err != nil {
				return err
			}
		}
		return nil
	}
	if got := framework.ReplayRoutes(events, 0, every); len(got) != 2 {
		t.Fatalf("routable on every write found %q, want the creation and the deletion", got)
	}

	// An errors Middleware's Service losing its last serving endpoint
	// disables the route that served; the Service coming back heals it.
	errs := obj{"kind": "Middleware", "metadata": obj{"name": "app-errors"},
		"spec": obj{"errors": obj{"service": obj{"name": "pages", "port": "http"}}}}
	paged := obj{"kind": "IngressRoute", "metadata": obj{"name": "app"},
		"spec": obj{"routes": []any{obj{"middlewares": []any{obj{"name": "app-errors"}}}}}}
	svc := obj{"kind": "Service", "metadata": obj{"name": "pages"}, "spec": obj{"ports": []any{obj{"name": "http"}}}}
	slice := func(serving bool) obj {
		return obj{"kind": "EndpointSlice", "metadata": obj{"name": "pages-x", "labels": obj{"kubernetes.io/service-name": "pages"}},
			"ports":     []any{obj{"name": "http"}},
			"endpoints": []any{obj{"addresses": []any{"10.0.0.9"}, "conditions": obj{"serving": serving}}}}
	}
	events = []framework.WatchEvent{
		{Kind: "service", Type: "ADDED", RV: 31, Obj: svc},
		{Kind: "slice", Type: "ADDED", RV: 32, Obj: slice(true)},
		{Kind: "middleware", Type: "ADDED", RV: 33, Obj: errs},
		{Kind: "route", Type: "ADDED", RV: 34, Obj: paged},
		{Kind: "slice", Type: "MODIFIED", RV: 35, Obj: slice(false)},
		{Kind: "slice", Type: "MODIFIED", RV: 36, Obj: slice(true)},
		{Kind: "service", Type: "DELETED", RV: 37, Obj: svc},
	}
	got = framework.ReplayRoutes(events, 0, framework.ServedRoutesStay(ns))
	want := []string{"after MODIFIED slice/pages-x (rv 35)", "after DELETED service/pages (rv 37)"}
	if len(got) != len(want) {
		t.Fatalf("replay found %q, want the two writes %q", got, want)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Fatalf("replay found %q, want the two writes %q", got, want)
		}
	}
}
