package children

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// The Traefik children — IngressRoutes and Middlewares — built as maps, as
// every custom resource is (see the package comment): stackdome carries no
// Go types of Traefik's CRDs, and a map says exactly the fields it sets.

// middleware is the errors Middleware: 5xx answers of the resource's routes
// are replaced by the page its service answers, the status code kept. A
// brand goes into the page's query (/_errors/{status}?brand=<name>):
// Traefik builds the page request from "http://"+host+query with url.Parse
// and sends its RequestURI, path and query (pkg/middlewares/customerrors),
// so the page server learns the brand from Traefik's request alone. The
// name is a DNS label (schema), which needs no escaping in a query.
func middleware(name string, svc observed.ServiceRef, brand string) object {
	s := object{"name": svc.Name, "port": svc.Port}
	if svc.Namespace != "" {
		s["namespace"] = svc.Namespace
	}
	query := "/_errors/{status}"
	if brand != "" {
		query += "?brand=" + brand
	}
	return object{
		"apiVersion": "traefik.io/v1alpha1",
		"kind":       "Middleware",
		"metadata":   crdMeta(schema.MiddlewareName(name), name),
		"spec": object{"errors": object{
			"status":  []any{"500-599"},
			"query":   query,
			"service": s,
		}},
	}
}

// routes are the routes of the public ports: every route host, and PathPrefix of
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
		match := spec.HostMatch()
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
			mws = append(mws, schema.StripName(name))
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

// ingressRoute is the IngressRoute of the public ports on its entry points
// (routeEntryPoints), one route per port (a route with several services would
// balance across them), with the team's own Middlewares that exist (team, in
// the spec's order), then the errors Middleware when errors says so, and
// TLS as the spec asks: its Secret, its resolver, the cluster's default
// resolver, or else the entry point's default certificate (tls: {}).
func ingressRoute(cfg Config, name string, spec schema.Spec, team []string, errors, stripReady bool) object {
	mws := slices.Clone(team)
	if errors {
		mws = append(mws, schema.MiddlewareName(name))
	}
	ir := object{"entryPoints": jsonStrings(routeEntryPoints(cfg, spec)), "routes": routes(name, spec, stripReady, mws)}
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
	return object{"apiVersion": "traefik.io/v1alpha1", "kind": "IngressRoute", "metadata": crdMeta(name, name), "spec": ir}
}

// routeEntryPoints are the entry points of the app's IngressRoute: the
// configured ones and, for an app without tls, the plain-HTTP one too. An
// app that asked for no TLS is served as it is on plain HTTP rather than
// redirected to an HTTPS whose only certificate would be the entry point's
// default (self-signed, in Traefik's default install): without it,
// http://<host>/ would land on the catch-all's 404 for an app that works.
func routeEntryPoints(cfg Config, spec schema.Spec) []string {
	if spec.TLS != nil || cfg.HTTPEntryPoint == "" || slices.Contains(cfg.EntryPoints, cfg.HTTPEntryPoint) {
		return cfg.EntryPoints
	}
	return append(slices.Clone(cfg.EntryPoints), cfg.HTTPEntryPoint)
}

// redirectRoute answers every request to the TLS host on the plain-HTTP
// entry point with a permanent redirect to HTTPS, path kept; its service (the
// primary port, a route needs one) is never reached.
func redirectRoute(cfg Config, name string, spec schema.Spec) object {
	primary, _ := spec.PrimaryPort()
	return object{
		"apiVersion": "traefik.io/v1alpha1",
		"kind":       "IngressRoute",
		"metadata":   crdMeta(schema.RedirectName(name), name),
		"spec": object{
			"entryPoints": []any{cfg.HTTPEntryPoint},
			"routes": []any{object{
				"kind":        "Rule",
				"match":       spec.HostMatch(),
				"middlewares": []any{object{"name": schema.HTTPSName(name)}},
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
		"metadata":   crdMeta(schema.StripName(name), name),
		"spec":       object{"stripPrefix": object{"prefixes": jsonStrings(prefixes)}},
	}
}

// httpsMiddleware redirects to HTTPS, permanently.
func httpsMiddleware(name string) object {
	return object{
		"apiVersion": "traefik.io/v1alpha1",
		"kind":       "Middleware",
		"metadata":   crdMeta(schema.HTTPSName(name), name),
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

// crdMeta is the metadata of a map-built child: its name and the labels of
// the resource instance it belongs to (objectMeta's, as a map).
func crdMeta(name, instance string) object {
	l := object{}
	for k, v := range labels(instance) {
		l[k] = v
	}
	return object{"name": name, "labels": l}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
