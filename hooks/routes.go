package hooks

import (
	"encoding/json"
	"slices"

	"github.com/stackdome/stackdome/schema"
)

// The routes of a resource with public ports: one IngressRoute with a route
// per public port, its TLS, and the Middlewares that help it — a stripPrefix
// for the ports routed at /<port name>, a redirectScheme for the plain-HTTP
// route of a TLS host. Each helper Middleware keeps the errors Middleware's
// guarantee (wiring.go): Traefik disables a router whose Middleware does not
// exist, and Metacontroller applies one answer's children in no fixed order,
// so a route that needs a Middleware appears only once that Middleware is
// observed, and a Middleware stays while an observed route still uses it.

// stripName, httpsName and redirectName name the helpers of a resource.
func stripName(name string) string    { return name + "-strip" }
func httpsName(name string) string    { return name + "-https" }
func redirectName(name string) string { return name + "-redirect" }

// routesView is what a sync request tells about the routing helpers.
type routesView struct {
	strip          []string // the observed stripPrefix Middleware's prefixes; nil: none observed
	httpsObserved  bool     // the redirectScheme Middleware exists
	routeStrips    bool     // the observed IngressRoute uses the stripPrefix Middleware
	redirectRefers bool     // the observed redirect IngressRoute uses the redirectScheme Middleware
}

// read fills the view from the observed children.
func (v *routesView) read(name, namespace string, child func(group, name string) *workload) {
	if m := child(groupMiddleware, stripName(name)); m != nil && m.Spec.StripPrefix != nil && len(m.Spec.StripPrefix.Prefixes) > 0 {
		v.strip = m.Spec.StripPrefix.Prefixes
	}
	v.httpsObserved = child(groupMiddleware, httpsName(name)) != nil
	if r := child(groupIngressRoute, redirectName(name)); r != nil {
		r.Metadata.Namespace = namespace
		v.redirectRefers = r.refersTo(httpsName(name))
	}
}

// routeChildren are the helper Middlewares, the IngressRoute and, for a TLS
// host, the plain-HTTP redirect IngressRoute. errors says the routes may use
// the errors Middleware.
func routeChildren(cfg Config, name string, spec schema.Spec, v routesView, errors bool) []any {
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
	case v.routeStrips && len(v.strip) > 0:
		out = append(out, stripMiddleware(name, v.strip)) // still used: one more sync
	}
	redirect := spec.TLS != nil && !slices.Contains(cfg.EntryPoints, cfg.HTTPEntryPoint)
	if redirect || v.redirectRefers {
		out = append(out, httpsMiddleware(name))
	}
	out = append(out, ingressRoute(cfg, name, spec, errors, v.strip != nil))
	if redirect && v.httpsObserved {
		out = append(out, redirectRoute(cfg, name, spec))
	}
	return out
}

// routes are the routes of the public ports: Host(host), and PathPrefix of
// the port's path if it has one. A route whose path is stripped uses the
// stripPrefix Middleware and is left out until it exists (stripReady);
// middlewares come first on every route.
func routes(name string, spec schema.Spec, stripReady bool, middlewares []string) []any {
	var out []any
	for _, p := range spec.PublicPorts() {
		path, strip := spec.RoutePath(p)
		if strip && !stripReady {
			continue
		}
		match := "Host(`" + spec.Host + "`)"
		if path != "" {
			match += " && PathPrefix(`" + path + "`)"
		}
		route := object{
			"kind":     "Rule",
			"match":    match,
			"services": []any{object{"name": name, "port": json.Number(itoa(p.Port))}},
		}
		mws := slices.Clone(middlewares)
		if strip {
			mws = append(mws, stripName(name))
		}
		if len(mws) > 0 {
			refs := make([]any, len(mws))
			for i, m := range mws {
				refs[i] = object{"name": m}
			}
			route["middlewares"] = refs
		}
		out = append(out, route)
	}
	return out
}

// ingressRoute is the IngressRoute of the public ports on the configured
// entry points, one route per port (a route with several services would
// balance across them), with the errors Middleware when errors says so, and
// TLS as the spec asks: its Secret, its resolver, the cluster's default
// resolver, or else the entry point's default certificate (tls: {}).
func ingressRoute(cfg Config, name string, spec schema.Spec, errors, stripReady bool) object {
	var mws []string
	if errors {
		mws = append(mws, middlewareName(name))
	}
	ir := object{"entryPoints": jsonStrings(cfg.EntryPoints), "routes": routes(name, spec, stripReady, mws)}
	if t := spec.TLS; t != nil {
		tls := object{}
		switch {
		case t.SecretName != "":
			tls["secretName"] = t.SecretName
		case t.CertResolver != "":
			tls["certResolver"] = t.CertResolver
		case cfg.DefaultCertResolver != "":
			tls["certResolver"] = cfg.DefaultCertResolver
		}
		ir["tls"] = tls
	}
	return object{"apiVersion": "traefik.io/v1alpha1", "kind": "IngressRoute", "metadata": childMeta(name, name), "spec": ir}
}

// redirectRoute answers every request to the TLS host on the plain-HTTP
// entry point with a permanent redirect to HTTPS, path kept; its service (the
// primary port, a route needs one) is never reached.
func redirectRoute(cfg Config, name string, spec schema.Spec) object {
	primary, _ := spec.PrimaryPort()
	return object{
		"apiVersion": "traefik.io/v1alpha1",
		"kind":       "IngressRoute",
		"metadata":   childMeta(redirectName(name), name),
		"spec": object{
			"entryPoints": []any{cfg.HTTPEntryPoint},
			"routes": []any{object{
				"kind":        "Rule",
				"match":       "Host(`" + spec.Host + "`)",
				"middlewares": []any{object{"name": httpsName(name)}},
				"services":    []any{object{"name": name, "port": json.Number(itoa(primary.Port))}},
			}},
		},
	}
}

// stripMiddleware strips the /<port name> prefixes before requests reach
// the app, which serves them at /.
func stripMiddleware(name string, prefixes []string) object {
	return object{
		"apiVersion": "traefik.io/v1alpha1",
		"kind":       "Middleware",
		"metadata":   childMeta(stripName(name), name),
		"spec":       object{"stripPrefix": object{"prefixes": jsonStrings(prefixes)}},
	}
}

// httpsMiddleware redirects to HTTPS, permanently.
func httpsMiddleware(name string) object {
	return object{
		"apiVersion": "traefik.io/v1alpha1",
		"kind":       "Middleware",
		"metadata":   childMeta(httpsName(name), name),
		"spec":       object{"redirectScheme": object{"scheme": "https", "permanent": true}},
	}
}

// jsonStrings is ss as JSON values.
func jsonStrings(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
