package children

import (
	"slices"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// The routes of a resource with public ports: one IngressRoute with a route
// per public port, its TLS, and the Middlewares that help it — a stripPrefix
// for the ports routed at /<port name>, a redirectScheme for the plain-HTTP
// route of a TLS host — and the team's own Middlewares (spec.middlewares),
// which stackdome never makes: a route refers to each only while the
// request relates it, i.e. while it exists. Each helper Middleware keeps the errors Middleware's
// guarantee (wiring.go): Traefik disables a router whose Middleware does not
// exist, and Metacontroller applies one answer's children in no fixed order,
// so a route that needs a Middleware appears only once that Middleware is
// observed, and a Middleware stays while an observed route still uses it;
// an observed route that uses a helper not observed keeps using it inside
// the settle window, as it keeps the errors Middleware (wiring.go).

// routeChildren are the helper Middlewares, the IngressRoute and, for a TLS
// host, the plain-HTTP redirect IngressRoute. errors says the routes may use
// the errors Middleware; first says the routes are a new resource's, made
// whole with the helpers of the same answer; open says a helper the
// observed routes use but the request does not show is still awaited
// (observed.Wiring.SettleOpen; wiring.go).
func routeChildren(cfg Config, name string, spec schema.Spec, v observed.Routes, errors, first, open bool) []any {
	var out []any
	var prefixes []string
	for _, p := range spec.PublicPorts() {
		if path, strip := spec.RoutePath(p); strip {
			prefixes = append(prefixes, path)
		}
	}
	switch {
	case len(prefixes) > 0:
		out = append(out, stripMiddleware(name, prefixes))
	case v.RouteStrips && len(v.Strip) > 0:
		out = append(out, stripMiddleware(name, v.Strip)) // still used: one more sync
	}
	redirect := spec.TLS != nil && !slices.Contains(cfg.EntryPoints, cfg.HTTPEntryPoint)
	if redirect || v.RedirectRefers {
		out = append(out, httpsMiddleware(name))
	}
	out = append(out, ingressRoute(cfg, name, spec, v.Middlewares, errors, v.Strip != nil || first || open && v.RouteStrips))
	if redirect && (v.HTTPSObserved || first || open && v.RedirectRefers) {
		out = append(out, redirectRoute(cfg, name, spec))
	}
	return out
}
