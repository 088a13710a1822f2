package hooks

import "github.com/stackdome/stackdome/internal/mcrequest"

// firstSyncs are first syncs proper: a new parent, no status stored on it
// yet (observed.Parent.Unanswered) and nothing observed, as Metacontroller
// sends one right after `kubectl apply` created it. The other cases with
// nothing observed carry the status the hook converged to, i.e. they are
// the syncs that follow until Metacontroller's creates are seen; their
// children differ from the first answer's only by the route's references
// to the Middlewares that answer creates (children/wiring.go). stackdome
// render prints the first answer; TestRenderIsTheFirstSync holds it to
// these.
func (g *fixtureGen) firstSyncs(c map[string]fixture) {
	// 44. The production app of the README: the wiring, the strip and redirect
	// Middlewares, the team's own Middlewares and the config digest, in one
	// answer whose IngressRoutes refer to all of them at once.
	p, _ := g.newParent("payments-api", "payments", productionSpec)
	c["first-sync-production"] = fixture{g: g, parent: unanswered(p)}

	// 45. A public port after a private one, hosts without tls: the route
	// answers on websecure and web and refers to the errors Middleware the
	// same answer creates.
	p, _ = g.newParent("storefront", "shop", `{"type":"Service","image":"ghcr.io/acme/storefront:2.0.0","replicas":2,"host":"shop.example.com",
		"hosts":["www.shop.example.com"],"ports":[{"name":"metrics","port":9090},{"name":"http","port":8000,"public":true},
		{"name":"api","port":8001,"public":true,"path":"/api"}]}`)
	c["first-sync-public"] = fixture{g: g, parent: unanswered(p)}
}

// unanswered is p as created: no status, so no status manager in its
// managedFields.
func unanswered(p mcrequest.Object) mcrequest.Object {
	p = mcrequest.Clone(p)
	md := mcrequest.Meta(p)
	md["managedFields"] = md["managedFields"].([]any)[:1]
	return p
}
