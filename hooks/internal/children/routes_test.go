package children

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// TestRouteChildren: the IngressRoute's TLS as the spec and the cluster
// default say, and the helper Middlewares' guarantee — a route that needs a
// Middleware appears only once the Middleware is observed, and a Middleware
// stays while an observed route uses it — but for a new resource's routes
// (first), made whole with the Middlewares of the same answer, and for a
// route that uses a Middleware not yet observed inside the settle window
// (open): Metacontroller's informers have not shown it yet.
func TestRouteChildren(t *testing.T) {
	two := schema.Spec{Type: schema.TypeService, Image: "i", Host: "a.example.com",
		Ports: []schema.Port{{Name: "http", Port: 80, Public: true}, {Name: "admin", Port: 81, Public: true}}}
	withTLS := func(s schema.Spec, t schema.TLS) schema.Spec { s.TLS = &t; return s }
	tests := map[string]struct {
		reason string
		cfg    Config
		spec   schema.Spec
		view   observed.Routes
		first  bool     // a new resource's first sync (wiring.go)
		open   bool     // the settle window is open (observed.Wiring.SettleOpen)
		want   []string // kind/name: one-line spec
	}{
		"a new resource, strip": {
			reason: "the first answer makes the stripped route with its Middleware: no update a sync later",
			spec:   two, first: true,
			want: []string{
				`Middleware/a-strip: {"stripPrefix":{"prefixes":["/admin"]}}`,
				`IngressRoute/a: {"entryPoints":["websecure","web"],"routes":[{"kind":"Rule","match":"Host(` + "`a.example.com`" + `)","services":[{"name":"a","port":80}]},{"kind":"Rule","match":"Host(` + "`a.example.com`" + `) \u0026\u0026 PathPrefix(` + "`/admin`" + `)","middlewares":[{"name":"a-strip"}],"services":[{"name":"a","port":81}]}]}`,
			},
		},
		"a new resource, tls": {
			reason: "the first answer makes the redirect route with its Middleware",
			spec:   withTLS(schema.Spec{Type: schema.TypeService, Image: "i", Host: "a.example.com", Ports: []schema.Port{{Name: "http", Port: 80, Public: true}}}, schema.TLS{}),
			first:  true,
			want: []string{
				`Middleware/a-https: {"redirectScheme":{"permanent":true,"scheme":"https"}}`,
				`IngressRoute/a: {"entryPoints":["websecure"],"routes":[{"kind":"Rule","match":"Host(` + "`a.example.com`" + `)","services":[{"name":"a","port":80}]}],"tls":{}}`,
				`IngressRoute/a-redirect: {"entryPoints":["web"],"routes":[{"kind":"Rule","match":"Host(` + "`a.example.com`" + `)","middlewares":[{"name":"a-https"}],"services":[{"name":"a","port":80}]}]}`,
			},
		},
		"no tls, strip not yet observed": {
			reason: "the stripped route waits for its Middleware; the Middleware is made now",
			spec:   two,
			want: []string{
				`Middleware/a-strip: {"stripPrefix":{"prefixes":["/admin"]}}`,
				`IngressRoute/a: {"entryPoints":["websecure","web"],"routes":[{"kind":"Rule","match":"Host(` + "`a.example.com`" + `)","services":[{"name":"a","port":80}]}]}`,
			},
		},
		"the route uses the strip it was created with, not yet observed, inside the settle window": {
			reason: "Metacontroller's informers show one answer's children in no fixed order: the stripped route is kept, not written now and again a sync later",
			spec:   two, view: observed.Routes{RouteStrips: true}, open: true,
			want: []string{
				`Middleware/a-strip: {"stripPrefix":{"prefixes":["/admin"]}}`,
				`IngressRoute/a: {"entryPoints":["websecure","web"],"routes":[{"kind":"Rule","match":"Host(` + "`a.example.com`" + `)","services":[{"name":"a","port":80}]},{"kind":"Rule","match":"Host(` + "`a.example.com`" + `) \u0026\u0026 PathPrefix(` + "`/admin`" + `)","middlewares":[{"name":"a-strip"}],"services":[{"name":"a","port":81}]}]}`,
			},
		},
		"the strip the route uses, still not observed past the settle window": {
			reason: "refused: the stripped route goes, so that Traefik does not disable the whole IngressRoute",
			spec:   two, view: observed.Routes{RouteStrips: true},
			want: []string{
				`Middleware/a-strip: {"stripPrefix":{"prefixes":["/admin"]}}`,
				`IngressRoute/a: {"entryPoints":["websecure","web"],"routes":[{"kind":"Rule","match":"Host(` + "`a.example.com`" + `)","services":[{"name":"a","port":80}]}]}`,
			},
		},
		"strip observed": {
			spec: two, view: observed.Routes{Strip: []string{"/admin"}},
			want: []string{
				`Middleware/a-strip: {"stripPrefix":{"prefixes":["/admin"]}}`,
				`IngressRoute/a: {"entryPoints":["websecure","web"],"routes":[{"kind":"Rule","match":"Host(` + "`a.example.com`" + `)","services":[{"name":"a","port":80}]},{"kind":"Rule","match":"Host(` + "`a.example.com`" + `) \u0026\u0026 PathPrefix(` + "`/admin`" + `)","middlewares":[{"name":"a-strip"}],"services":[{"name":"a","port":81}]}]}`,
			},
		},
		"the stripped port made private while the route still uses the Middleware": {
			reason: "the Middleware stays, with its observed prefixes, one more sync",
			spec:   schema.Spec{Type: schema.TypeService, Image: "i", Host: "a.example.com", Ports: []schema.Port{{Name: "http", Port: 80, Public: true}, {Name: "admin", Port: 81}}},
			view:   observed.Routes{Strip: []string{"/admin"}, RouteStrips: true},
			want: []string{
				`Middleware/a-strip: {"stripPrefix":{"prefixes":["/admin"]}}`,
				`IngressRoute/a: {"entryPoints":["websecure","web"],"routes":[{"kind":"Rule","match":"Host(` + "`a.example.com`" + `)","services":[{"name":"a","port":80}]}]}`,
			},
		},
		"tls from the cluster default, redirect not yet": {
			reason: "tls without secret or resolver takes --tls-cert-resolver; the redirect route waits for its Middleware",
			cfg:    Config{DefaultCertResolver: "le"},
			spec:   withTLS(schema.Spec{Type: schema.TypeService, Image: "i", Host: "a.example.com", Ports: []schema.Port{{Name: "http", Port: 80, Public: true}}}, schema.TLS{}),
			want: []string{
				`Middleware/a-https: {"redirectScheme":{"permanent":true,"scheme":"https"}}`,
				`IngressRoute/a: {"entryPoints":["websecure"],"routes":[{"kind":"Rule","match":"Host(` + "`a.example.com`" + `)","services":[{"name":"a","port":80}]}],"tls":{"certResolver":"le"}}`,
			},
		},
		"the redirect route's Middleware not yet observed, inside the settle window": {
			reason: "the redirect route created whole is kept, not deleted now and created again a sync later",
			spec:   withTLS(schema.Spec{Type: schema.TypeService, Image: "i", Host: "a.example.com", Ports: []schema.Port{{Name: "http", Port: 80, Public: true}}}, schema.TLS{}),
			view:   observed.Routes{RedirectRefers: true}, open: true,
			want: []string{
				`Middleware/a-https: {"redirectScheme":{"permanent":true,"scheme":"https"}}`,
				`IngressRoute/a: {"entryPoints":["websecure"],"routes":[{"kind":"Rule","match":"Host(` + "`a.example.com`" + `)","services":[{"name":"a","port":80}]}],"tls":{}}`,
				`IngressRoute/a-redirect: {"entryPoints":["web"],"routes":[{"kind":"Rule","match":"Host(` + "`a.example.com`" + `)","middlewares":[{"name":"a-https"}],"services":[{"name":"a","port":80}]}]}`,
			},
		},
		"the redirect route's Middleware still not observed past the settle window": {
			reason: "refused: the redirect route goes (Traefik would disable it); it comes back once the Middleware is observed",
			spec:   withTLS(schema.Spec{Type: schema.TypeService, Image: "i", Host: "a.example.com", Ports: []schema.Port{{Name: "http", Port: 80, Public: true}}}, schema.TLS{}),
			view:   observed.Routes{RedirectRefers: true},
			want: []string{
				`Middleware/a-https: {"redirectScheme":{"permanent":true,"scheme":"https"}}`,
				`IngressRoute/a: {"entryPoints":["websecure"],"routes":[{"kind":"Rule","match":"Host(` + "`a.example.com`" + `)","services":[{"name":"a","port":80}]}],"tls":{}}`,
			},
		},
		"tls with the entry point's certificate, redirect observed": {
			reason: "no default resolver: tls {} is TLS with the entry point's default certificate",
			spec:   withTLS(schema.Spec{Type: schema.TypeService, Image: "i", Host: "a.example.com", Ports: []schema.Port{{Name: "http", Port: 80, Public: true}}}, schema.TLS{}),
			view:   observed.Routes{HTTPSObserved: true},
			want: []string{
				`Middleware/a-https: {"redirectScheme":{"permanent":true,"scheme":"https"}}`,
				`IngressRoute/a: {"entryPoints":["websecure"],"routes":[{"kind":"Rule","match":"Host(` + "`a.example.com`" + `)","services":[{"name":"a","port":80}]}],"tls":{}}`,
				`IngressRoute/a-redirect: {"entryPoints":["web"],"routes":[{"kind":"Rule","match":"Host(` + "`a.example.com`" + `)","middlewares":[{"name":"a-https"}],"services":[{"name":"a","port":80}]}]}`,
			},
		},
		"tls removed while the redirect route still uses its Middleware": {
			reason: "the redirect route goes first; its Middleware one sync later",
			spec:   schema.Spec{Type: schema.TypeService, Image: "i", Host: "a.example.com", Ports: []schema.Port{{Name: "http", Port: 80, Public: true}}},
			view:   observed.Routes{HTTPSObserved: true, RedirectRefers: true},
			want: []string{
				`Middleware/a-https: {"redirectScheme":{"permanent":true,"scheme":"https"}}`,
				`IngressRoute/a: {"entryPoints":["websecure","web"],"routes":[{"kind":"Rule","match":"Host(` + "`a.example.com`" + `)","services":[{"name":"a","port":80}]}]}`,
			},
		},
		"two hosts, no tls": {
			reason: "every route answers for both hosts, on the configured and the plain-HTTP entry point: http://<host>/ never lands on the catch-all",
			spec:   schema.Spec{Type: schema.TypeService, Image: "i", Host: "a.example.com", Hosts: []string{"www.a.example.com"}, Ports: []schema.Port{{Name: "http", Port: 80, Public: true}, {Name: "api", Port: 81, Public: true, Path: "/v2"}}},
			want: []string{
				`IngressRoute/a: {"entryPoints":["websecure","web"],"routes":[{"kind":"Rule","match":"(Host(` + "`a.example.com`" + `) || Host(` + "`www.a.example.com`" + `))","services":[{"name":"a","port":80}]},{"kind":"Rule","match":"(Host(` + "`a.example.com`" + `) || Host(` + "`www.a.example.com`" + `)) \u0026\u0026 PathPrefix(` + "`/v2`" + `)","services":[{"name":"a","port":81}]}]}`,
			},
		},
		"hosts only, tls, redirect observed": {
			reason: "without host the hosts alone route; the redirect answers for each of them",
			spec:   withTLS(schema.Spec{Type: schema.TypeService, Image: "i", Hosts: []string{"a.example.com", "b.example.com"}, Ports: []schema.Port{{Name: "http", Port: 80, Public: true}}}, schema.TLS{}),
			view:   observed.Routes{HTTPSObserved: true},
			want: []string{
				`Middleware/a-https: {"redirectScheme":{"permanent":true,"scheme":"https"}}`,
				`IngressRoute/a: {"entryPoints":["websecure"],"routes":[{"kind":"Rule","match":"(Host(` + "`a.example.com`" + `) || Host(` + "`b.example.com`" + `))","services":[{"name":"a","port":80}]}],"tls":{}}`,
				`IngressRoute/a-redirect: {"entryPoints":["web"],"routes":[{"kind":"Rule","match":"(Host(` + "`a.example.com`" + `) || Host(` + "`b.example.com`" + `))","middlewares":[{"name":"a-https"}],"services":[{"name":"a","port":80}]}]}`,
			},
		},
		"no tls on an entry point list that has the http one": {
			reason: "the plain-HTTP entry point is not added twice",
			cfg:    Config{EntryPoints: []string{"web"}},
			spec:   schema.Spec{Type: schema.TypeService, Image: "i", Host: "a.example.com", Ports: []schema.Port{{Name: "http", Port: 80, Public: true}}},
			want: []string{
				`IngressRoute/a: {"entryPoints":["web"],"routes":[{"kind":"Rule","match":"Host(` + "`a.example.com`" + `)","services":[{"name":"a","port":80}]}]}`,
			},
		},
		"team middlewares, one not yet observed": {
			reason: "only the observed ones, in the spec's order, before the stripPrefix; the missing one is never referred to",
			spec: func() schema.Spec {
				s := two
				s.Middlewares = []schema.MiddlewareRef{{Name: "auth"}, {Name: "limit"}, {Name: "headers"}}
				return s
			}(),
			view: observed.Routes{Strip: []string{"/admin"}, Middlewares: []string{"auth", "headers"}},
			want: []string{
				`Middleware/a-strip: {"stripPrefix":{"prefixes":["/admin"]}}`,
				`IngressRoute/a: {"entryPoints":["websecure","web"],"routes":[{"kind":"Rule","match":"Host(` + "`a.example.com`" + `)","middlewares":[{"name":"auth"},{"name":"headers"}],"services":[{"name":"a","port":80}]},{"kind":"Rule","match":"Host(` + "`a.example.com`" + `) \u0026\u0026 PathPrefix(` + "`/admin`" + `)","middlewares":[{"name":"auth"},{"name":"headers"},{"name":"a-strip"}],"services":[{"name":"a","port":81}]}]}`,
			},
		},
		"tls on an entry point list that has the http one": {
			reason: "no redirect onto a route's own entry point",
			cfg:    Config{EntryPoints: []string{"web", "websecure"}},
			spec:   withTLS(schema.Spec{Type: schema.TypeService, Image: "i", Host: "a.example.com", Ports: []schema.Port{{Name: "http", Port: 80, Public: true}}}, schema.TLS{SecretName: "s"}),
			view:   observed.Routes{HTTPSObserved: true},
			want: []string{
				`IngressRoute/a: {"entryPoints":["web","websecure"],"routes":[{"kind":"Rule","match":"Host(` + "`a.example.com`" + `)","services":[{"name":"a","port":80}]}],"tls":{"secretName":"s"}}`,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var got []string
			for _, c := range routeChildren(withDefaults(tc.cfg), "a", tc.spec, tc.view, false, tc.first, tc.open) {
				o := c.(object)
				b, err := json.Marshal(o["spec"])
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, o["kind"].(string)+"/"+o["metadata"].(object)["name"].(string)+": "+string(b))
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestTeamMiddlewaresBeforeErrors: the team's Middlewares come first, then
// the errors Middleware, then the stripPrefix: the team's auth answers
// before anything of the app is reached, and its 5xx still get the pages.
func TestTeamMiddlewaresBeforeErrors(t *testing.T) {
	spec := schema.Spec{Type: schema.TypeService, Image: "i", Host: "a.example.com",
		Ports: []schema.Port{{Name: "http", Port: 80, Public: true}, {Name: "admin", Port: 81, Public: true}}}
	ir := ingressRoute(withDefaults(Config{}), "a", spec, []string{"auth", "limit"}, true, true)
	var got [][]string
	for _, r := range ir["spec"].(object)["routes"].([]any) {
		var names []string
		for _, m := range r.(object)["middlewares"].([]any) {
			names = append(names, m.(object)["name"].(string))
		}
		got = append(got, names)
	}
	want := [][]string{{"auth", "limit", "a-errors"}, {"auth", "limit", "a-errors", "a-strip"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("middlewares per route (-want +got):\n%s", diff)
	}
}
