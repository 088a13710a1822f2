package hooks

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/stackdome/stackdome/internal/mcrequest"
	"github.com/stackdome/stackdome/schema"
)

// The generator's cases, in the order their parents are numbered (a uid is
// its parent's number: a case added at the end moves no other case's uids).
// Each case's comment says what it shows.

func podObjects(ps ...corev1.Pod) []mcrequest.Object {
	var out []mcrequest.Object
	for _, p := range ps {
		out = append(out, mcrequest.ToObject(p))
	}
	return out
}

// running1 is a Deployment's status with its one replica ready.
var running1 = depStatus(1, 1, 1, 1, newRSAvailable)

// crashing1 is a Deployment's status with its one replica not ready.
var crashing1 = depStatus(1, 1, 0, 0, rsProgressing)

func (g *fixtureGen) cases() map[string]fixture {
	c := map[string]fixture{}
	g.services(c)
	g.failures(c)
	g.hookVersions(c, g.placementAndScaling(c))
	g.lifecycle(c)
	g.wiring(c)
	g.batch(c)
	g.firstSyncs(c)
	return c
}

// running is the fixture of a parent p whose settled children are observed
// (child numbers from k), its Deployment with status st, and pods.
func (g *fixtureGen) running(p mcrequest.Object, k int, st any, pods ...corev1.Pod) (fixture, map[string]mcrequest.Object) {
	d := g.settled(fixture{g: g, parent: p})
	return fixture{g: g, parent: p, children: observeAll(p, d, k, st, ""), pods: podObjects(pods...)}, d
}

func (g *fixtureGen) services(c map[string]fixture) {
	// 1. single port, first syncs: nothing created yet.
	p, _ := g.newParent("api", "shop", `{"type":"Service","image":"ghcr.io/acme/api:1.4.2","ports":[{"name":"http","port":8080}]}`)
	c["single-port"] = fixture{g: g, parent: p}.converged()

	// 2. public port declared after a private one: the probe and the route take the public one.
	p, _ = g.newParent("web", "shop", `{"type":"Service","image":"ghcr.io/acme/web:2.0.0","replicas":2,"host":"shop.example.com",
		"ports":[{"name":"metrics","port":9090},{"name":"http","port":8000,"public":true}]}`)
	c["public-after-private"] = fixture{g: g, parent: p}.converged()

	// 3. no ports: a worker; serving, nothing to dial.
	p, k := g.newParent("worker", "jobs", `{"type":"Service","image":"ghcr.io/acme/worker:7","args":["--queue","emails"]}`)
	d := g.settled(fixture{g: g, parent: p})
	c["no-ports"] = fixture{g: g, parent: p, children: observeAll(p, d, k, running1, ""),
		pods: podObjects(pod("worker-6f7d8c9b5-x2k4q", p, d["Deployment/worker"], "127.0.0.31", k, podOpts{}))}.converged()

	// 4. StatefulService with storage, rolling out its first pod.
	p, k = g.newParent("db", "data", `{"type":"StatefulService","image":"postgres:17","replicas":3,
		"env":[{"name":"PGDATA","value":"/var/lib/postgresql/data/pgdata"}],"ports":[{"name":"pg","port":5432}],
		"storage":{"size":"10Gi","mountPath":"/var/lib/postgresql/data","storageClassName":"fast"}}`)
	d = g.settled(fixture{g: g, parent: p})
	sst := obj(`{"observedGeneration":1,"replicas":1,"currentReplicas":1,"updatedReplicas":1,"currentRevision":"db-7b9c","updateRevision":"db-7b9c","collisionCount":0,"availableReplicas":0}`)
	c["stateful-storage"] = fixture{g: g, parent: p, children: observeAll(p, d, k, sst, "StatefulSet"),
		pods: podObjects(pod("db-0", p, d["StatefulSet/db"], "127.0.0.41", k, podOpts{pending: true}))}.converged()

	// 5. explicit readiness and liveness probes win over the synthesized one.
	p, _ = g.newParent("search", "shop", `{"type":"Service","image":"ghcr.io/acme/search:3.1","ports":[{"name":"http","port":9200},{"name":"transport","port":9300}],
		"resources":{"requests":{"cpu":"0.5","memory":"1Gi"},"limits":{"memory":"1Gi"}},
		"healthChecks":{"readiness":{"httpGet":{"path":"/_cluster/health","port":"http"},"periodSeconds":5},
		"liveness":{"tcpSocket":{"port":9300},"initialDelaySeconds":60}}}`)
	c["explicit-readiness"] = fixture{g: g, parent: p}.converged()

	// 6. branded error pages turned off: the route has no errors middleware and none is made.
	p, _ = g.newParent("docs", "www", `{"type":"Service","image":"nginx:1.27","host":"docs.example.com","errorPages":{"enabled":false},
		"ports":[{"name":"http","port":80,"public":true}]}`)
	c["error-pages-disabled"] = fixture{g: g, parent: p}.converged()

	// 7. rollout in progress: the Deployment still runs the old template, new
	// pods are being created.
	p, k = g.newParent("shopfront", "shop", `{"type":"Service","image":"ghcr.io/acme/shopfront:5.2.0","replicas":2,"host":"www.example.com",
		"ports":[{"name":"http","port":8080,"public":true}]}`)
	d = g.settled(fixture{g: g, parent: p})
	dep := d["Deployment/shopfront"]
	old := mcrequest.Clone(dep)
	mcrequest.Map(old, "spec", "template", "metadata", "annotations")["stackdome.io/revision"] = "0a1b2c3d4e"
	mcrequest.Container(old, schema.ContainerName)["image"] = "ghcr.io/acme/shopfront:5.1.9"
	d["Deployment/shopfront"] = old
	c["rollout-in-progress"] = fixture{g: g, parent: p,
		children: observeAll(p, d, k, depStatus(2, 0, 2, 2, progressing{"True", "ReplicaSetUpdated", `ReplicaSet "shopfront-0a1b2c3d4e" is progressing.`}), ""),
		pods: podObjects(pod("shopfront-0a1b2c3d4e-7hjkl", p, old, "127.0.0.71", k, podOpts{}), pod("shopfront-0a1b2c3d4e-m9pq2", p, old, "127.0.0.72", k+1, podOpts{}),
			pod("shopfront-"+revisionOf(dep)+"-zx8vw", p, dep, "", k+2, podOpts{pending: true}))}.converged()

	// 8. serving: every replica ready; the first sync of a fresh stackdome asks
	// for the ports to be dialed.
	p, k = g.newParent("checkout", "shop", `{"type":"Service","image":"ghcr.io/acme/checkout:1.0.3","replicas":2,"host":"checkout.example.com",
		"ports":[{"name":"http","port":8080,"public":true},{"name":"metrics","port":9090}]}`)
	d = g.settled(fixture{g: g, parent: p})
	dep = d["Deployment/checkout"]
	c["serving"] = fixture{g: g, parent: p, children: observeAll(p, d, k, depStatus(2, 2, 2, 2, newRSAvailable), ""),
		pods: podObjects(pod("checkout-5d9c7b8f6-abcde", p, dep, "127.0.0.81", k, podOpts{}), pod("checkout-5d9c7b8f6-fghij", p, dep, "127.0.0.82", k+1, podOpts{}))}.converged()

	// 8a. error pages, the chart not installed yet: no error-page Service to
	// relate, so no Middleware and no route refers to one.
	p, _ = g.newParent("cart", "shop", `{"type":"Service","image":"ghcr.io/acme/cart:1.1","host":"cart.example.com",
		"ports":[{"name":"http","port":8080,"public":true}]}`)
	c["error-pages-not-installed"] = fixture{g: g, parent: p, noErrSvc: true}.converged()

	// 8b. error pages wired and serving, then the chart uninstalled (the related Service is gone):
	// the mirrored EndpointSlice keeps its last address and the route keeps its Middleware.
	p, k = g.newParent("orders", "shop", `{"type":"Service","image":"ghcr.io/acme/orders:2.3","host":"orders.example.com",
		"ports":[{"name":"http","port":8080,"public":true}]}`)
	f, d := g.running(p, k, running1)
	f.pods, f.noErrSvc = podObjects(pod("orders-3e2d1c0b9a-qazws", p, d["Deployment/orders"], "127.0.0.85", k, podOpts{})), true
	c["error-pages-uninstalled"] = f.converged()
}
