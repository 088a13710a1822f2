package children

import (
	"encoding/json"
	"net/netip"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// The error wiring of a resource with public ports: how its 5xx reach the
// branded pages through Traefik with Traefik's default provider flags
// (allowCrossNamespace, allowEmptyServices and allowExternalNameServices
// false). Traefik drops an errors Middleware whose Service is in another
// namespace or has no endpoints, and disables every router that refers to a
// dropped Middleware (traefik/traefik@v3.7.13 pkg/provider/kubernetes/crd/kubernetes.go,
// "Error while reading error page middleware"; pkg/server/middleware/middlewares.go,
// "middleware %q does not exist"). So the Middleware
// points at a Service in the app's own namespace, `<name>-error-pages`,
// selectorless and headless, whose one EndpointSlice holds the ClusterIP of
// the chart's error-page Service: the service proxy (kube-proxy or its
// equivalent) takes Traefik's page requests from there to a ready page
// server. A ClusterIP outlives every rollout, restart and scale-to-zero of
// stackdome, so the only related object the wiring needs — the chart's
// Service — is not written when stackdome rolls out, and Metacontroller
// resyncs no StackResource for it.
//
// What keeps a route up:
//   - the mirrored EndpointSlice never goes empty once it had an address: when
//     the chart's Service is gone (uninstalled) or unreadable, the observed
//     slice's addresses are kept (a page that cannot be fetched is a failed
//     page, the app's status is kept; an empty slice is a dead route);
//   - the IngressRoute refers to the Middleware only once the Middleware, the
//     Service and the EndpointSlice with an address are observed, i.e. exist;
//     Metacontroller applies the children of one answer in no fixed order, so
//     a reference made in the same answer that creates them could reach
//     Traefik first;
//   - but for a new resource's IngressRoute: the first sync (no answer stored
//     on the parent, the route not observed) returns it whole, referring to
//     the Middlewares the same answer creates (this one, and the stripPrefix
//     and redirectScheme of routes.go). The route has never been routed, so
//     there is nothing to disable: if Traefik sees it before them, it leaves
//     it out for the moment until they arrive (requests get the 404 they got
//     before it existed; the app's pods are not ready yet either). Made
//     without them, it would be written again a sync later, an update that
//     Metacontroller pays at its client rate and Traefik with a rebuild of
//     its routers, once per new app;
//   - a route that refers to a Middleware keeps the reference while what it
//     needs is returned but not observed, if the absence is inside the
//     settle window (Wiring.SettleOpen: the window the status gives a missing
//     child). Metacontroller's informers show the children of one answer in
//     no fixed order, so a later sync can see the route created whole before
//     its Middleware (or, for this one, the mirrored Service or slice), and
//     a Middleware someone deleted is created again by the same answer.
//     Dropping the reference there is a write a later sync undoes, paid
//     twice as above (the fleet at 1,000 apps, docs/performance.md, wrote a
//     route three times so). Past the window the Middleware was refused (the
//     status says ChildNotCreated from the same sync): the route drops the
//     reference (the rule above), and the app is served without its pages;
//   - taking the wiring away goes the other way round: while the observed
//     IngressRoute still refers to the Middleware it is kept (as observed),
//     and while the observed Middleware points at the mirrored Service, that
//     Service and its slice are kept. Metacontroller deletes before it
//     updates, so dropping both in one answer would leave the route
//     referring to nothing for a moment.

// Routing is the children that route a resource with public ports: the
// mirrored Service and EndpointSlice and the errors Middleware when they are
// wanted or still needed, then the IngressRoute and its helpers (routes.go).
// A spec without public ports has none. It is a pure function of its
// arguments.
func Routing(cfg Config, name string, spec schema.Spec, v observed.Wiring) ([]any, error) {
	public := spec.PublicPorts()
	if len(public) == 0 {
		return nil, nil
	}
	mirror := observed.ServiceRef{Name: schema.ErrorPagesName(name), Port: json.RawMessage(itoa(cfg.ErrorService.Port))}
	mirrorReady := v.ServiceObserved && len(v.Slice) > 0
	wantPages := spec.WantsErrorPages() && !cfg.NoErrorService

	var target *observed.ServiceRef // the Middleware's service; nil: no Middleware
	var addrs []netip.Addr          // the mirrored slice's addresses; nil: no mirror
	refer := false
	switch {
	case wantPages && cfg.ErrorService.CrossNamespace:
		t := observed.ServiceRef{Name: cfg.ErrorService.Name, Namespace: cfg.ErrorService.Namespace, Port: json.RawMessage(itoa(cfg.ErrorService.Port))}
		target = &t
		refer = v.Middleware != nil && v.Middleware.Equal(t)
	case wantPages:
		addrs = v.Related.Addrs
		if len(addrs) == 0 {
			addrs = v.Slice // the last known addresses: never go empty
		}
		if len(addrs) == 0 {
			break // not installed yet: nothing to point at
		}
		t := mirror
		if !mirrorReady && v.Middleware != nil {
			// Do not move an observed Middleware to a Service that does
			// not exist yet.
			t = *v.Middleware
		}
		target = &t
		refer = v.Middleware != nil && v.Middleware.Equal(t) && (!t.Equal(mirror) || mirrorReady)
	}
	first := v.First && !v.RouteObserved
	if first && target != nil {
		refer = true // a new resource's route: created whole (see above)
	}
	if target != nil && v.RouteRefers && v.SettleOpen && awaited(v, *target, mirror) {
		refer = true // what it refers to is in flight (see above)
	}
	if target == nil && v.RouteRefers && v.Middleware != nil {
		target = v.Middleware // the route still refers to it: keep it one more sync
	}
	if addrs == nil && v.Middleware != nil && v.Middleware.Equal(mirror) {
		addrs = v.Slice // the observed Middleware still points here: keep them
	}

	var out []any
	if len(addrs) > 0 {
		for _, t := range []any{mirrorService(cfg, name), mirrorSlice(cfg, name, addrs)} {
			m, err := canonical(t)
			if err != nil {
				return nil, err
			}
			out = append(out, m)
		}
	}
	if target != nil {
		out = append(out, middleware(name, *target, spec.ErrorPagesBrand()))
	}
	return append(out, routeChildren(cfg, name, spec, v.Routes, refer, first, v.SettleOpen)...), nil
}

// awaited says that all a route referring to the Middleware pointed at t
// lacks is children not observed at all: the Middleware, or, for the
// mirror, its Service or slice. An observed Middleware pointed elsewhere
// or an observed slice without an address is a state of its own, decided
// by the rules above, not an absence the settle window waits out.
func awaited(v observed.Wiring, t, mirror observed.ServiceRef) bool {
	if v.MiddlewareObserved && (v.Middleware == nil || !v.Middleware.Equal(t)) {
		return false
	}
	return !t.Equal(mirror) || !v.SliceObserved || len(v.Slice) > 0
}
