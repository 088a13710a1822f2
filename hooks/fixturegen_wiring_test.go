package hooks

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// hookVersions: the chart moving its sync hook between versions v1 and v2
// (Metacontroller's UniformObjectMap.Convert): the same cluster state as
// Metacontroller v4.17.2 sends it to a hook at each version. Pods are still
// starting (no IP): nothing is dialed, so each pair's answers do not depend
// on a verifier shared between them. podFrom numbers the pods.
func (g *fixtureGen) hookVersions(c map[string]fixture, podFrom int) {
	pair := func(name, image string, beforeV1 bool, before, after string, n int) {
		p, k := g.newParent(name, "shop", fmt.Sprintf(`{"type":"Service","image":%q,"replicas":2,"host":%q,
			"ports":[{"name":"http","port":8080,"public":true}]}`, image, name+".example.com"))
		d := g.settled(fixture{g: g, parent: p, v1: beforeV1})
		dep := d["Deployment/"+name]
		h := templateHash(revisionOf(dep))
		var pods []corev1.Pod
		for i, sfx := range []string{"qwert", "yuiop"} {
			pods = append(pods, pod(fmt.Sprintf("%s-%s-%s", name, h, sfx), p, dep, "", n+i, podOpts{pending: true}))
		}
		f := fixture{g: g, parent: p, v1: beforeV1, children: observeAll(p, d, k, depStatus(2, 2, 0, 0, rsProgressing), ""), pods: podObjects(pods...)}
		c[before] = f.converged()
		f = c[before]
		f.v1 = !beforeV1
		c[after] = f.converged()
	}
	// The upgrade: an app that only ever ran under the registration before
	// 0.2.0 (sync at v1) has no wiring and its status says why; at the first
	// sync at v2 the wiring is added and nothing else changes.
	pair("basket", "ghcr.io/acme/basket:2.3.0", true, "sync-hook-v1-unwired", "sync-hook-v2-switched", podFrom)
	// A rollback of the chart: a wired app seen by a sync hook at v1 again.
	// The error-page Service is filtered out, every child is kept, status
	// says what it cannot see.
	pair("wishlist", "ghcr.io/acme/wishlist:1.8.2", false, "sync-hook-v2-wired", "sync-hook-v1-rolled-back", podFrom+10)
}

func (g *fixtureGen) lifecycle(c map[string]fixture) {
	// 33. scaled in from 2 replicas to 1: the PodDisruptionBudget the 2 pods had is observed and no
	// longer returned, so Metacontroller deletes it (a budget over one pod protects nothing).
	p, k := g.newParent("ledger", "payments", `{"type":"Service","image":"ghcr.io/acme/ledger:3.3","replicas":2,"ports":[{"name":"http","port":8080}]}`)
	f, d := g.running(p, k, depStatus(2, 2, 2, 2, newRSAvailable))
	f.pods = replicaPods(p, d["Deployment/ledger"], k, 221, "a1b2c", "d3e4f")
	c["disruption-budget-scaled-in"] = f.converged().withSpec(func(s map[string]any) { s["replicas"] = 1 }).converged()

	// 34. a database with a memory-backed /dev/shm and a writable /tmp under a read-only root
	// filesystem: emptyDir volumes with their size limits, mounted read-write.
	p, _ = g.newParent("reports-db", "data", `{"type":"StatefulService","image":"postgres:17","replicas":1,"ports":[{"name":"pg","port":5432}],
		"storage":{"size":"20Gi","mountPath":"/var/lib/postgresql/data"},"securityContext":{"readOnlyRootFilesystem":true},
		"scratch":[{"name":"tmp","mountPath":"/tmp","sizeLimit":"1Gi"},{"name":"run","mountPath":"/var/run/postgresql","sizeLimit":"16Mi"}],
		"shm":{"sizeLimit":"512Mi"}}`)
	c["scratch-and-shm"] = fixture{g: g, parent: p}.converged()

	// 35. the migration fails: its init container exits 3 and crash-loops, the app container
	// waits behind it (PodInitializing). Status names the init container like a crash.
	p, k = g.newParent("invoices", "billing", `{"type":"Service","image":"ghcr.io/acme/invoices:2.8.0","ports":[{"name":"http","port":8080}],
		"envFrom":[{"secretRef":{"name":"invoices-db"}}],"migration":{"command":["/app/invoices"],"args":["migrate","up"]}}`)
	f, d = g.running(p, k, crashing1)
	dep := d["Deployment/invoices"]
	h := templateHash(revisionOf(dep))
	image := template(dep).Spec.Containers[0].Image
	mp := pod("invoices-"+h+"-k8s7d", p, dep, "127.0.0.231", k, podOpts{})
	const at = "2026-11-29T11:00:11Z"
	mp.Status.Phase = corev1.PodPending
	mp.Status.Conditions = []corev1.PodCondition{
		condition("PodReadyToStartContainers", "True", at),
		{Type: corev1.PodInitialized, Status: "False", LastTransitionTime: mtime(at), Reason: "ContainersNotInitialized", Message: "containers with incomplete status: [migrate]"},
		{Type: corev1.PodReady, Status: "False", LastTransitionTime: mtime(at), Reason: "ContainersNotReady", Message: "containers with unready status: [app]"},
		{Type: corev1.ContainersReady, Status: "False", LastTransitionTime: mtime(at), Reason: "ContainersNotReady", Message: "containers with unready status: [app]"},
		condition(corev1.PodScheduled, "True", at),
	}
	mp.Status.InitContainerStatuses = []corev1.ContainerStatus{*crashed("migrate", image,
		"back-off 2m40s restarting failed container=migrate pod=invoices-"+h+"-k8s7d_billing", 5, 3, "Error",
		"2026-11-29T11:57:02Z", "2026-11-29T11:57:04Z", "containerd://4be1d0c2")}
	mp.Status.ContainerStatuses = []corev1.ContainerStatus{waiting("app", image, "PodInitializing", "", 0)}
	f.pods = podObjects(mp)
	c["migration-failing"] = f.converged()

	// 36. a drain longer than the grace period slipped past admission (a CRD without the rule):
	// InvalidSpec, the running children kept as last applied, so no pod is killed mid-drain.
	p, k = g.newParent("quotes", "apps", `{"type":"Service","image":"ghcr.io/acme/quotes:1.2","replicas":1,"ports":[{"name":"http","port":8080}]}`)
	f, d = g.running(p, k, running1)
	f.pods = podObjects(pod("quotes-"+templateHash(revisionOf(d["Deployment/quotes"]))+"-zq9xr", p, d["Deployment/quotes"], "127.0.0.235", k, podOpts{}))
	c["invalid-spec-drain"] = f.converged().withSpec(func(s map[string]any) { s["drainSeconds"] = 40 }).converged()
}

func (g *fixtureGen) wiring(c map[string]fixture) {
	// 37. More than one host, no tls: every route answers for each host, on websecure and on
	// the plain-HTTP entry point web, so http://<host>/ reaches the app
	// instead of the catch-all's 404.
	p, _ := g.newParent("docs-site", "web", `{"type":"Service","image":"ghcr.io/acme/docs:5.1","host":"docs.example.com",
		"hosts":["www.docs.example.com","docs.example.org"],
		"ports":[{"name":"http","port":8080,"public":true},{"name":"search","port":8081,"public":true,"path":"/search"}]}`)
	c["hosts-without-tls"] = g.observedOnly(p)

	// 38. The team's own Middlewares: auth exists and is attached before the
	// errors Middleware on every route; rate-limit does not exist yet, is never
	// referred to (Traefik would disable the route), and status names it.
	p, _ = g.newParent("ledger", "finance", `{"type":"Service","image":"ghcr.io/acme/ledger:2.4","host":"ledger.example.com",
		"middlewares":[{"name":"sso-auth"},{"name":"rate-limit"}],
		"ports":[{"name":"http","port":8080,"public":true},{"name":"admin","port":8081,"public":true}]}`)
	c["team-middlewares"] = g.observedOnly(p)

	// 39. Config follows: the pods' template carries the digest of the
	// ConfigMap and Secret the app uses, so a change of their content rolls
	// the pods; the feature flags are read through envFrom with
	// rollOnChange false (a flag flip must not restart every pod); an
	// optional ConfigMap that does not exist is no error. Config=Found.
	p, k := g.newParent("cart", "shop", `{"type":"Service","image":"ghcr.io/acme/cart:3.0","ports":[{"name":"http","port":8080}],
		"env":[{"name":"DB_PASSWORD","valueFrom":{"secretKeyRef":{"name":"cart-db","key":"password"}}},
		{"name":"REGION","valueFrom":{"configMapKeyRef":{"name":"cart-region","key":"region","optional":true}}}],
		"envFrom":[{"configMapRef":{"name":"cart-flags"},"rollOnChange":false}],
		"files":[{"name":"config","mountPath":"/etc/cart","configMap":{"name":"cart-config"}}]}`)
	f, d := g.running(p, k, running1)
	f.pods = podObjects(pod("cart-"+templateHash(revisionOf(d["Deployment/cart"]))+"-x1y2z", p, d["Deployment/cart"], "127.0.0.241", k, podOpts{}))
	c["config-follows"] = f.converged()

	// 40. A ConfigMap the app needs does not exist: status names it
	// (Config=False ConfigNotFound) instead of a silent Progressing; the pods
	// wait for it (the kubelet does not start them), the Secret exists.
	p, _ = g.newParent("search", "shop", `{"type":"Service","image":"ghcr.io/acme/search:1.0","ports":[{"name":"http","port":8080}],
		"envFrom":[{"configMapRef":{"name":"search-settings"}},{"secretRef":{"name":"search-key"}}]}`)
	c["config-missing"] = fixture{g: g, parent: p}.converged()

	// 41. A brand: the app picks the platform's brand acme-pay, and its errors
	// Middleware asks the page server for it in the page's query
	// (/_errors/{status}?brand=acme-pay); the routes are as without one.
	// errorPages.enabled is as the API server defaults it.
	p, _ = g.newParent("pay", "payments", `{"type":"Service","image":"ghcr.io/acme/pay:4.2","host":"pay.example.com",
		"ports":[{"name":"http","port":8080,"public":true}],"errorPages":{"enabled":true,"brand":"acme-pay"}}`)
	c["error-pages-brand"] = g.observedOnly(p)

	// 42. A NetworkPolicy the app asked for: Traefik's namespace to the public
	// port, stackdome's pods to every declared port (the port gate's dials),
	// the app's own namespace to every declared port, nothing else.
	p, _ = g.newParent("orders", "shop", `{"type":"Service","image":"ghcr.io/acme/orders:3.1","host":"orders.example.com",
		"ports":[{"name":"http","port":8080,"public":true},{"name":"grpc","port":9000}],"networkPolicy":{"enabled":true}}`)
	c["network-policy"] = g.observedOnly(p)

	// 43. The app names its metrics port: a default install has no
	// PodMonitors (--pod-monitors=false), so nothing more is made; with
	// them on the same request gets a PodMonitor (chart/podmonitor_test.go).
	p, _ = g.newParent("catalog", "shop", `{"type":"Service","image":"ghcr.io/acme/catalog:2.0","host":"catalog.example.com",
		"ports":[{"name":"http","port":8080,"public":true},{"name":"metrics","port":9090}],"metrics":{"port":"metrics","path":"/metrics"}}`)
	c["metrics-port"] = g.observedOnly(p)
}
