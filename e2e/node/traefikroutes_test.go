//go:build e2e

package node

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestTraefikRoutesOnRealNode: an app's routes as users get them — the
// chart installed at its defaults (stackdome's entry points: websecure,
// and web for plain HTTP; the error pages wired into every route; the
// catch-all's branded 404 on web and websecure), the chart's Traefik at
// its defaults (websecure is TLS with Traefik's self-signed default
// certificate), the real Metacontroller applying stackdome's answers, the
// apps portapp pods the kubelet runs. One release for three subtests, each
// in a namespace of its own (see each for what it proves and how it
// bites). After each phase every router of the test's and the release's
// IngressRoutes is enabled, and after every single write of the phase
// (replayed from a watch of the namespace, RouteWatch.RequireRoutesStay)
// no route that had been routable refers to a Middleware, an error-page Service or
// a serving endpoint that is not there — but for the team's own deletion
// of a Middleware its app uses.
func TestTraefikRoutesOnRealNode(t *testing.T) {
	f := framework.NewNodeFixture(t)
	rel := f.InstallChart()
	t.Run("PlainHTTPNeverLandsOnTheCatchAll", func(t *testing.T) { plainHTTPNeverLandsOnTheCatchAll(t, rel) })
	t.Run("TLSRoutes", func(t *testing.T) { tlsRoutes(t, rel) })
	t.Run("TeamMiddlewares", func(t *testing.T) { teamMiddlewares(t, rel) })
}

// routesNamespace is a namespace for one subtest, its pods described if
// it fails, Traefik's routers readable from it (openRouterAPI), and what
// Traefik reads to route its IngressRoutes watched from now (watchRoutes);
// it returns the namespace, the namespaces whose routers the subtest owns,
// and the watch.
func routesNamespace(t *testing.T, rel *framework.Release) (string, []string, *framework.RouteWatch) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	ns := f.Namespace(nil)
	t.Cleanup(func() { f.DescribePods(ns) })
	rw := f.WatchRoutes(ns)
	f.OpenRouterAPI(ns)
	return ns, []string{ns, rel.NS}, rw
}

// publicApp is a portapp app on host with one public port, http :8080.
func publicApp(host string) obj {
	spec := framework.PortApp(framework.PortArgs("8080"), obj{"name": "http", "port": 8080, "public": true})
	spec["host"] = host
	return spec
}

// plainHTTPNeverLandsOnTheCatchAll proves spec.hosts and the plain-HTTP
// default: an app without tls answers http://<host>/ for each of its hosts
// on web (before, its routes were on websecure only and plain HTTP got
// the catch-all's branded 404), and on websecure (over TLS); an app with
// tls and two hosts is redirected from plain HTTP to HTTPS for each host,
// path and query kept, and answers over TLS on websecure; an unknown host
// gets the catch-all's branded 404 on both. Traefik's routers: the first
// app's on web and websecure, the second's on websecure, its redirect on
// web.
//
// It bites (checked): with HostMatch (schema/defaults.go) matching
// spec.host alone, the routers' rules lack www.*; with the -https
// Middleware's redirect not permanent (httpsMiddleware,
// hooks/internal/children/traefik.go), each redirect is a 302.
func plainHTTPNeverLandsOnTheCatchAll(t *testing.T, rel *framework.Release) {
	f := framework.NewNodeFixture(t)
	ctx := t.Context()
	ns, own, rw := routesNamespace(t, rel)
	from := rw.Mark()
	docs := publicApp("docs.node.test")
	docs["hosts"] = []any{"www.docs.node.test"}
	shop := publicApp("shop.node.test")
	shop["hosts"] = []any{"www.shop.node.test"}
	shop["tls"] = obj{}
	f.CreateApp(ns, "docs", docs)
	f.CreateApp(ns, "shop", shop)
	for _, name := range []string{"docs", "shop"} {
		f.WaitCondition(3*time.Minute, ns, name, "Available", "True", "Serving")
		f.WaitCondition(time.Minute, ns, name, "ErrorPages", "True", "Wired")
	}
	const docsRule = "(Host(`docs.node.test`) || Host(`www.docs.node.test`))"
	const shopRule = "(Host(`shop.node.test`) || Host(`www.shop.node.test`))"
	f.WaitRouters("docs on websecure and web; shop on websecure, its redirect on web", own, framework.RoutesAre(ns, map[string][]string{
		docsRule + " | " + framework.MiddlewareRef(ns, "docs-errors"): {"web", "websecure"},
		shopRule + " | " + framework.MiddlewareRef(ns, "shop-errors"): {"websecure"},
		shopRule + " | " + framework.MiddlewareRef(ns, "shop-https"):  {"web"},
	}))
	f.WaitServed("websecure", "docs.node.test", "/", 8080, "/")
	f.WaitServed("websecure", "shop.node.test", "/", 8080, "/")
	rw.RequireRoutesStay(t, from, "created")

	// Each host of the app without tls, on each entry point: the app, not
	// the catch-all's 404.
	for _, h := range []string{"docs.node.test", "www.docs.node.test"} {
		for _, ep := range []string{"web", "websecure"} {
			r, err := f.AskTraefik(ctx, ep, h, "/guide", framework.BrowserAccept)
			if err == nil {
				err = framework.ServedBy(r, 8080, h, "/guide")
			}
			if err == nil && r.TLS != (ep == "websecure") {
				err = fmt.Errorf("TLS %v on %s", r.TLS, ep)
			}
			if err != nil {
				t.Errorf("%s %s/guide: %v (the catch-all's 404 is what plain HTTP got before)", ep, h, err)
			}
		}
	}
	// Each host of the app with tls: plain HTTP redirected, path and query
	// kept; HTTPS served.
	for _, h := range []string{"shop.node.test", "www.shop.node.test"} {
		r, err := f.AskTraefik(ctx, "web", h, "/cart?x=1", "")
		if err == nil {
			err = framework.RedirectsTo(r, "https://"+h+"/cart?x=1")
		}
		if err != nil {
			t.Errorf("web http://%s/cart?x=1: %v", h, err)
		}
		r, err = f.AskTraefik(ctx, "websecure", h, "/cart?x=1", "")
		if err == nil {
			err = framework.ServedBy(r, 8080, h, "/cart")
		}
		if err != nil {
			t.Errorf("websecure https://%s/cart?x=1: %v", h, err)
		}
	}
	// An unknown host: the catch-all's branded 404 on both.
	for _, ep := range []string{"web", "websecure"} {
		r, err := f.AskTraefik(ctx, ep, "nobody.node.test", "/guide", framework.BrowserAccept)
		if err == nil {
			err = framework.IsPage(404, "404 Not Found", "")(r.Answer())
		}
		if err != nil {
			t.Errorf("%s, an unknown host: %v; want the catch-all's branded 404", ep, err)
		}
	}
}

// tlsRoutes proves a tls app's routes: with spec.tls {} its IngressRoute
// is served over TLS on websecure with Traefik's default certificate;
// plain HTTP to the host on web is redirected to HTTPS, path and query
// kept; a further public port answers at /<port name> with the prefix
// stripped, another at its own path as it is. Its children are exactly
// the Service and Deployment, the -strip, -https and -errors
// Middlewares, the IngressRoute and its -redirect, the error-page Service
// and its EndpointSlice; status says ErrorPages True Wired; an app's 503
// on every route reaches a browser as the branded page, its status kept.
//
// It bites (checked; hooks/internal/children/traefik.go): without the
// strip Middleware on the /admin route (routes) its router lacks it; with
// the strip Middleware stripping another prefix (stripMiddleware) the
// admin port is asked for /admin/settings and /admin; with the redirect
// not permanent, it is a 302.
func tlsRoutes(t *testing.T, rel *framework.Release) {
	f := framework.NewNodeFixture(t)
	ctx := t.Context()
	ns, own, rw := routesNamespace(t, rel)
	from := rw.Mark()
	const name, host = "shopfront", "store.node.test"
	spec := framework.PortApp(framework.PortArgs("8080", "9090", "7070"),
		obj{"name": "http", "port": 8080, "public": true},
		obj{"name": "admin", "port": 9090, "public": true},
		obj{"name": "api", "port": 7070, "public": true, "path": "/v2"})
	spec["host"] = host
	spec["tls"] = obj{}
	f.CreateApp(ns, name, spec)
	f.WaitCondition(3*time.Minute, ns, name, "Available", "True", "Serving")
	f.WaitCondition(time.Minute, ns, name, "ErrorPages", "True", "Wired")

	want := []string{
		"deployments/" + name,
		"endpointslices/" + name + "-error-pages",
		"ingressroutes/" + name, "ingressroutes/" + name + "-redirect",
		"middlewares/" + name + "-errors", "middlewares/" + name + "-https", "middlewares/" + name + "-strip",
		"services/" + name, "services/" + name + "-error-pages",
	}
	if got := f.AppChildren(rel, ns, name); !slices.Equal(got, want) {
		t.Errorf("children %v, want %v", got, want)
	}
	hostRule := "Host(`" + host + "`)"
	errorsMW := framework.MiddlewareRef(ns, name+"-errors")
	f.WaitRouters("the app's routers: three on websecure, the redirect on web", own, framework.RoutesAre(ns, map[string][]string{
		hostRule + " | " + errorsMW: {"websecure"},
		hostRule + " && PathPrefix(`/admin`) | " + errorsMW + ", " + framework.MiddlewareRef(ns, name+"-strip"): {"websecure"},
		hostRule + " && PathPrefix(`/v2`) | " + errorsMW:                                                        {"websecure"},
		hostRule + " | " + framework.MiddlewareRef(ns, name+"-https"):                                           {"web"},
	}))
	f.WaitServed("websecure", host, "/", 8080, "/")
	rw.RequireRoutesStay(t, from, "created")

	// The redirect: plain HTTP on web, any path, answered by Traefik.
	if r, err := f.AskTraefik(ctx, "web", host, "/admin/settings?x=1", ""); err != nil {
		t.Error(err)
	} else if err := framework.RedirectsTo(r, "https://"+host+"/admin/settings?x=1"); err != nil {
		t.Errorf("web http://%s/admin/settings?x=1: %v", host, err)
	}
	// TLS on websecure, SNI the app's host: each port at its route.
	for _, c := range []struct {
		path, reached string
		port          int
	}{
		{"/", "/", 8080},
		{"/cart", "/cart", 8080},
		{"/admin/settings", "/settings", 9090}, // stripped
		{"/admin", "/", 9090},                  // Traefik's stripPrefix leaves at least /
		{"/v2/orders", "/v2/orders", 7070},     // its own path, as it is
	} {
		r, err := f.AskTraefik(ctx, "websecure", host, c.path, "")
		if err == nil {
			err = framework.ServedBy(r, c.port, host, c.reached)
		}
		if err == nil && !r.TLS {
			err = fmt.Errorf("not over TLS")
		}
		if err != nil {
			t.Errorf("https://%s%s: %v", host, c.path, err)
		}
	}
	// Every route's 503 reaches a browser as the branded page.
	for _, path := range []string{"/status/503", "/admin/status/503", "/v2/status/503"} {
		r, err := f.AskTraefik(ctx, "websecure", host, path, framework.BrowserAccept)
		if err == nil {
			err = framework.IsPage(503, "503 Service Unavailable", "")(r.Answer())
		}
		if err != nil {
			t.Errorf("https://%s%s: %v", host, path, err)
		}
	}
}

// teamMiddlewares proves spec.middlewares: a Middleware the spec names that
// exists is on the route, in the spec's order, before the errors
// Middleware (its header on the app's 200); one that does not exist is
// never referred to, so the route stays enabled and serves, and status
// names it (Middlewares False MiddlewareNotFound); once it is created
// (which relates it: the real Metacontroller watches the related objects
// the customize answer names) the next sync attaches it (Attached), both
// headers on the 200 and the team's on the branded 503 (the errors
// Middleware inside the team's); once one is deleted the next sync drops
// it and the route serves again.
//
// It bites (checked): with the errors Middleware put before the team's
// (ingressRoute, hooks/internal/children/traefik.go) the router's
// Middlewares are in the other order.
func teamMiddlewares(t *testing.T, rel *framework.Release) {
	f := framework.NewNodeFixture(t)
	ctx := t.Context()
	ns, own, rw := routesNamespace(t, rel)
	from := rw.Mark()
	const name, host = "ledger", "ledger.node.test"
	mwPath := "/apis/traefik.io/v1alpha1/namespaces/" + ns + "/middlewares"
	headerMiddleware := func(mw, header string) {
		t.Helper()
		if _, err := f.Kube.Create(ctx, mwPath, obj{"apiVersion": "traefik.io/v1alpha1", "kind": "Middleware", "metadata": obj{"name": mw},
			"spec": obj{"headers": obj{"customResponseHeaders": obj{header: mw}}}}); err != nil {
			t.Fatal(err)
		}
	}
	headerMiddleware("team-headers", "X-Team")
	spec := publicApp(host)
	spec["middlewares"] = []any{obj{"name": "team-headers"}, obj{"name": "late-headers"}}
	f.CreateApp(ns, name, spec)

	// middlewaresAre waits for the Middlewares condition: status and
	// reason, its message naming mentions.
	middlewaresAre := func(phase, status, reason, mentions string) {
		t.Helper()
		sr := f.WaitCondition(time.Minute, ns, name, "Middlewares", status, reason)
		if msg, _ := framework.SRCondition(sr, "Middlewares")["message"].(string); !strings.Contains(msg, mentions) {
			t.Errorf("%s: Middlewares %s %s says %q, want it to name %s", phase, status, reason, msg, mentions)
		}
	}
	routed := func(phase string, mws ...string) {
		t.Helper()
		refs := make([]string, len(mws))
		for i, m := range mws {
			refs[i] = framework.MiddlewareRef(ns, m)
		}
		f.WaitRouters(phase+": the route with "+strings.Join(mws, ", "), own, framework.RoutesAre(ns, map[string][]string{
			"Host(`" + host + "`) | " + strings.Join(refs, ", "): {"web", "websecure"},
		}))
	}
	// headers asks the app's route for /books on web: its 200 and the team
	// headers on it.
	headers := func(phase string) (xTeam, xLate string) {
		t.Helper()
		r, err := f.AskTraefik(ctx, "web", host, "/books", "")
		if err == nil {
			err = framework.ServedBy(r, 8080, host, "/books")
		}
		if err != nil {
			t.Fatalf("%s: http://%s/books: %v", phase, host, err)
		}
		return r.Header.Get("X-Team"), r.Header.Get("X-Late")
	}

	// One of the two exists: it is on the route before the errors
	// Middleware, the missing one is named in status.
	f.WaitCondition(3*time.Minute, ns, name, "Available", "True", "Serving")
	f.WaitCondition(time.Minute, ns, name, "ErrorPages", "True", "Wired")
	middlewaresAre("one missing", "False", "MiddlewareNotFound", `"late-headers"`)
	routed("one missing", "team-headers", name+"-errors")
	f.WaitServed("web", host, "/", 8080, "/")
	rw.RequireRoutesStay(t, from, "one missing")
	if team, late := headers("one missing"); team != "team-headers" || late != "" {
		t.Errorf("one missing: X-Team %q X-Late %q, want team-headers and none", team, late)
	}

	// The missing one is created: attached in the spec's order.
	from = rw.Mark()
	headerMiddleware("late-headers", "X-Late")
	middlewaresAre("created", "True", "Attached", `"team-headers", "late-headers"`)
	routed("created", "team-headers", "late-headers", name+"-errors")
	rw.RequireRoutesStay(t, from, "created")
	if team, late := headers("created"); team != "team-headers" || late != "late-headers" {
		t.Errorf("created: X-Team %q X-Late %q, want both", team, late)
	}
	// The errors Middleware inside the team's: the app's 503 is the
	// branded page, the team's header on it.
	if r, err := f.AskTraefik(ctx, "web", host, "/status/503", framework.BrowserAccept); err != nil {
		t.Error(err)
	} else if err := framework.IsPage(503, "503 Service Unavailable", "")(r.Answer()); err != nil {
		t.Errorf("created: the app's 503: %v, want the branded page", err)
	} else if got := r.Header.Get("X-Team"); got != "team-headers" {
		t.Errorf("created: the branded 503 has X-Team %q, want team-headers (the team's Middleware outside the errors one)", got)
	}

	// One is deleted: until the next sync Traefik disables the route (its
	// own rule; the deletion is what resyncs the resource), and the next
	// sync drops the reference. The team's deletion breaks the route
	// itself, so this phase is not checked write by write.
	if err := f.Kube.Do(ctx, "DELETE", mwPath+"/team-headers", "", nil, nil); err != nil {
		t.Fatal(err)
	}
	middlewaresAre("deleted", "False", "MiddlewareNotFound", `"team-headers"`)
	routed("deleted", "late-headers", name+"-errors")
	if team, late := headers("deleted"); team != "" || late != "late-headers" {
		t.Errorf("deleted: X-Team %q X-Late %q, want none and late-headers", team, late)
	}
}
