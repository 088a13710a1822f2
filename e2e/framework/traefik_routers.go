//go:build e2e

package framework

// Traefik's own view of its routes: its HTTP routers, read from its API
// through an IngressRoute to api@internal that the test makes, and the
// checks made on them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/google/go-cmp/cmp"
)

// routerAPIPath is where Traefik's API lists its HTTP routers.
const routerAPIPath = "/api/http/routers?per_page=1000"

// OpenRouterAPI makes Traefik's API readable from the node for this test:
// in ns, the IngressRoute the Traefik chart's ingressRoute.dashboard value
// would create (PathPrefix(`/api`) on the traefik entry point to the
// TraefikService api@internal, which the chart's default api.dashboard=true
// provides), and waits until /api/http/routers answers.
//
// Why the test's own IngressRoute and not the chart's value or
// api.insecure: the platform Traefik is installed once for the package,
// at the defaults users run, and TestInstallDoc installs it again from
// docs/install.md; a value set there would change what every other test
// runs on. The IngressRoute adds one router on an entry point no app
// uses, is what a user following Traefik's own dashboard docs creates,
// and goes with the test's namespace. api@internal is a cross-provider
// reference, which the chart's default (no crossProviderNamespaces)
// allows from any namespace.
func (f *NodeFixture) OpenRouterAPI(ns string) {
	t := f.t
	t.Helper()
	_, err := f.Kube.Create(t.Context(), "/apis/traefik.io/v1alpha1/namespaces/"+ns+"/ingressroutes", Obj{
		"apiVersion": "traefik.io/v1alpha1", "kind": "IngressRoute", "metadata": Obj{"name": "traefik-api"},
		"spec": Obj{"entryPoints": []any{"traefik"}, "routes": []any{Obj{
			"kind": "Rule", "match": "PathPrefix(`/api`)",
			"services": []any{Obj{"name": "api@internal", "kind": "TraefikService"}},
		}}},
	})
	if err != nil {
		t.Fatalf("creating the IngressRoute to Traefik's API: %v", err)
	}
	f.WaitFor(time.Minute, "Traefik's API answering on its traefik entry point", func() (bool, error) {
		_, err := f.TraefikRouters(t.Context())
		return err == nil, err
	})
}

// TraefikRouters reads Traefik's HTTP routers from the node, through the
// route OpenRouterAPI made.
func (f *NodeFixture) TraefikRouters(ctx context.Context) ([]Router, error) {
	body, err := f.GetFromNode(ctx, "http://"+net.JoinHostPort(f.TraefikIP(), TraefikPorts["traefik"])+routerAPIPath, "")
	if err != nil {
		return nil, err
	}
	var rs []Router
	if err := json.Unmarshal([]byte(body), &rs); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", routerAPIPath, err)
	}
	return rs, nil
}

// WaitRouters polls Traefik's routers until cond holds for them and every
// router of the namespaces namespaces (the test's own and its release's: a
// kubernetescrd router is named <namespace>-<IngressRoute>-…) is enabled,
// and returns them; a minute without both fails t. Enabled is waited for,
// not read once: Metacontroller creates a new app's IngressRoute and its
// Middlewares in its own order, and a configuration Traefik builds between
// them disables the route (`middleware "…" does not exist`) until the next
// one, which disables nothing that served (docs/design.md: a new
// resource's first sync returns the route whole; requireRoutesStay holds
// every write after a route served). Other namespaces are other tests', which may still be
// going away.
func (f *NodeFixture) WaitRouters(what string, namespaces []string, cond func([]Router) error) []Router {
	t := f.t
	t.Helper()
	var rs []Router
	err := WaitUntil(time.Minute, 250*time.Millisecond, what, func() (bool, error) {
		var err error
		if rs, err = f.TraefikRouters(t.Context()); err != nil {
			return false, err
		}
		if err = cond(rs); err != nil {
			return false, err
		}
		var disabled []error
		for _, r := range rs {
			if ownRouter(r, namespaces) && r.Status != "enabled" {
				disabled = append(disabled, fmt.Errorf("router %s is %s: %v", r.Name, r.Status, r.Error))
			}
		}
		err = errors.Join(disabled...)
		return err == nil, err
	})
	if err != nil {
		out, _ := json.MarshalIndent(rs, "", "  ")
		t.Fatalf("%v\nrouters: %s", err, out)
	}
	return rs
}

// ownRouter says whether r is built from an IngressRoute of one of
// namespaces: a kubernetescrd router is named <namespace>-<IngressRoute>-…,
// and one Traefik split per entry point (an entry point with its own
// http options, websecure's TLS, gives it a copy of its own) has
// "<entry point>-" before that.
func ownRouter(r Router, namespaces []string) bool {
	if r.Provider != "kubernetescrd" {
		return false
	}
	name := r.Name
	for ep := range TraefikPorts {
		name = strings.TrimPrefix(name, ep+"-")
	}
	for _, ns := range namespaces {
		if strings.HasPrefix(name, ns+"-") {
			return true
		}
	}
	return false
}

// RouteTable is the routers of the IngressRoutes of ns but OpenRouterAPI's,
// keyed "<rule> | <middlewares in order>", each with the entry points it
// is on, sorted: a router Traefik split per entry point counts once.
func RouteTable(rs []Router, ns string) map[string][]string {
	out := map[string][]string{}
	for _, r := range rs {
		if !ownRouter(r, []string{ns}) || r.Service == "api@internal" {
			continue
		}
		k := r.Rule + " | " + strings.Join(r.Middlewares, ", ")
		out[k] = append(out[k], r.EntryPoints...)
		slices.Sort(out[k])
	}
	return out
}

// RoutesAre is a WaitRouters condition: RouteTable of ns is want.
func RoutesAre(ns string, want map[string][]string) func([]Router) error {
	return func(rs []Router) error {
		if diff := cmp.Diff(want, RouteTable(rs, ns)); diff != "" {
			return fmt.Errorf("routers (-want +got):\n%s", diff)
		}
		return nil
	}
}

// MiddlewareRef is how Traefik names the Middleware name of namespace ns on a
// router.
func MiddlewareRef(ns, name string) string { return ns + "-" + name + "@kubernetescrd" }
