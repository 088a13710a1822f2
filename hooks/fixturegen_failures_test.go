package hooks

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/stackdome/stackdome/internal/mcrequest"
	"github.com/stackdome/stackdome/schema"
)

// crashed is the app container crash-looping after its last exit.
func crashed(name, image, message string, restarts, exit int32, reason, started, finished, id string) *corev1.ContainerStatus {
	cs := waiting(name, image, "CrashLoopBackOff", message, restarts)
	cs.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ExitCode: exit, Reason: reason,
		StartedAt: mtime(started), FinishedAt: mtime(finished), ContainerID: id}
	return &cs
}

func (g *fixtureGen) failures(c map[string]fixture) {
	// 9. crash-looping: OOMKilled, exit 137, in CrashLoopBackOff.
	p, k := g.newParent("reports", "finance", `{"type":"Service","image":"ghcr.io/acme/reports:0.9","ports":[{"name":"http","port":8080}],
		"resources":{"limits":{"memory":"128Mi"}}}`)
	f, d := g.running(p, k, crashing1)
	f.pods = podObjects(pod("reports-6b7c8d9e0f-qwert", p, d["Deployment/reports"], "127.0.0.91", k, podOpts{notReady: true,
		container: crashed("app", "ghcr.io/acme/reports:0.9", "back-off 2m40s restarting failed container=app pod=reports-6b7c8d9e0f-qwert_finance",
			6, 137, "OOMKilled", "2026-11-29T11:50:01Z", "2026-11-29T11:50:31Z", "containerd://4f5e")}))
	c["crash-looping"] = f.converged()

	// 10. invalid spec (a duplicate port number slipped past admission) with the app running:
	// the children are rebuilt from their last-applied annotation, nothing is deleted or changed.
	p, k = g.newParent("billing", "finance", `{"type":"Service","image":"ghcr.io/acme/billing:2.2","host":"billing.example.com","ports":[{"name":"http","port":8080,"public":true}]}`)
	f, d = g.running(p, k, running1)
	f.pods = podObjects(pod("billing-7c8d9e0f1a-asdfg", p, d["Deployment/billing"], "127.0.0.101", k, podOpts{}))
	c["invalid-spec-running"] = f.converged().withSpec(func(s map[string]any) {
		s["ports"] = append(s["ports"].([]any), map[string]any{"name": "admin", "port": 8080})
	}).converged()

	// 11. a serving private app as a sync hook at version v1 sees it: keys
	// are names (the registration before 0.2.0, still read during a switch).
	p, k = g.newParent("ledger", "finance", `{"type":"Service","image":"ghcr.io/acme/ledger:4.0","ports":[{"name":"grpc","port":9000}]}`)
	d = g.settled(fixture{g: g, parent: p, v1: true})
	c["v1-keys"] = fixture{g: g, parent: p, v1: true, children: observeAll(p, d, k, running1, ""),
		pods: podObjects(pod("ledger-58f9c6d7b4-lkjhg", p, d["Deployment/ledger"], "127.0.0.111", k, podOpts{}))}.converged()

	// 12. observed children full of server-defaulted fields (clusterIP,
	// ipFamilies, strategy, probe timing, volumeMode...) and a spec with
	// non-canonical quantities: the answer carries only what stackdome owns.
	p, k = g.newParent("cache", "shop", `{"type":"Service","image":"redis:7.4","ports":[{"name":"redis","port":6379}],
		"resources":{"requests":{"cpu":"0.25","memory":"0.5Gi"},"limits":{"cpu":"1000m"}}}`)
	f, d = g.running(p, k, running1)
	f.pods = podObjects(pod("cache-7d6c5b4a39-poiuy", p, d["Deployment/cache"], "127.0.0.121", k, podOpts{}))
	c["server-defaulted"] = f.converged()

	// 13. running but never ready for 20 minutes, nothing verified yet: past the boot grace.
	p, k = g.newParent("legacy", "ops", `{"type":"Service","image":"ghcr.io/acme/legacy:11","ports":[{"name":"http","port":8080}]}`)
	f, d = g.running(p, k, crashing1)
	f.pods = podObjects(pod("legacy-5f4e3d2c1b-zxcvb", p, d["Deployment/legacy"], "127.0.0.131", k, podOpts{notReady: true, readySince: "2026-11-29T11:00:12Z"}))
	c["not-ready-past-boot-grace"] = f.converged()

	// 14. scaled to zero: converged, and honest that nothing serves.
	p, k = g.newParent("batch", "jobs", `{"type":"Service","image":"ghcr.io/acme/batch:3","replicas":0,"ports":[{"name":"http","port":8080}]}`)
	f, _ = g.running(p, k, depStatus(0, 0, 0, 0, newRSAvailable))
	c["scaled-to-zero"] = f.converged()

	// 15. a spec of the wrong shape (ports as a string) with children running:
	// kept as last applied.
	p, k = g.newParent("mailer", "ops", `{"type":"Service","image":"ghcr.io/acme/mailer:1","ports":[{"name":"smtp","port":2525}]}`)
	f, d = g.running(p, k, running1)
	f.pods = podObjects(pod("mailer-6a5b4c3d2e-mnbvc", p, d["Deployment/mailer"], "127.0.0.151", k, podOpts{}))
	c["invalid-spec-wrong-type"] = f.converged().withSpec(func(s map[string]any) { s["ports"] = "smtp:2525" }).converged()

	// 16. the image cannot be pulled: ImagePullBackOff names the image and the registry's answer.
	p, k = g.newParent("invoices", "finance", `{"type":"Service","image":"ghcr.io/acme/invoices:3.0.0-rc1","ports":[{"name":"http","port":8080}]}`)
	f, d = g.running(p, k, crashing1)
	pull := waiting("app", "ghcr.io/acme/invoices:3.0.0-rc1", "ImagePullBackOff",
		`Back-off pulling image "ghcr.io/acme/invoices:3.0.0-rc1": ErrImagePull: failed to pull and unpack image "ghcr.io/acme/invoices:3.0.0-rc1": not found`, 0)
	f.pods = podObjects(pod("invoices-4c3b2a1f0e-rtyui", p, d["Deployment/invoices"], "127.0.0.161", k, podOpts{notReady: true, container: &pull}))
	c["image-pull-failed"] = f.converged()

	// 17. the container cannot be created: a Secret its env refers to does not exist.
	p, k = g.newParent("notifier", "ops", `{"type":"Service","image":"ghcr.io/acme/notifier:2.1","ports":[{"name":"http","port":8080}],
		"env":[{"name":"SMTP_PASSWORD","valueFrom":{"secretKeyRef":{"name":"smtp","key":"password"}}}]}`)
	f, d = g.running(p, k, crashing1)
	cfgErr := waiting("app", "ghcr.io/acme/notifier:2.1", "CreateContainerConfigError", `secret "smtp" not found`, 0)
	f.pods = podObjects(pod("notifier-2b1a0f9e8d-ghjkl", p, d["Deployment/notifier"], "127.0.0.171", k, podOpts{notReady: true, container: &cfgErr}))
	c["container-config-error"] = f.converged()

	g.beforeUpgrade(c)

	// 20. a pod that cannot be scheduled for 20 minutes: the scheduler's
	// message; stalled past the boot grace.
	p, k = g.newParent("renderer", "media", `{"type":"Service","image":"ghcr.io/acme/renderer:2.0","ports":[{"name":"http","port":8080}],
		"resources":{"requests":{"cpu":"16","memory":"64Gi"}}}`)
	d = fixture{g: g, parent: p}.desired()
	pend := pod("renderer-8b7c6d5f4g-lmnop", p, d["Deployment/renderer"], "", k, podOpts{pending: true})
	pend.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: "False", LastTransitionTime: mtime(fixtureEarlier), Reason: "Unschedulable",
		Message: "0/3 nodes are available: 3 Insufficient cpu, 3 Insufficient memory. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."}}
	pend.Status.ContainerStatuses = nil
	c["unschedulable"] = fixture{g: g, parent: p, children: observeAll(p, d, k, crashing1, ""), pods: podObjects(pend)}.converged()

	// 21. the ReplicaSet cannot create pods: the namespace's quota refuses them.
	p, k = g.newParent("exporter", "ops", `{"type":"Service","image":"ghcr.io/acme/exporter:1.2","ports":[{"name":"metrics","port":9100}],
		"resources":{"limits":{"cpu":"1","memory":"256Mi"}}}`)
	d = fixture{g: g, parent: p}.desired()
	st := depStatus(0, 0, 0, 0, rsProgressing)
	st.Conditions[0] = depStatus(1, 0, 0, 0, rsProgressing).Conditions[0]
	st.Conditions = append(st.Conditions, appsv1.DeploymentCondition{Type: appsv1.DeploymentReplicaFailure, Status: "True", Reason: "FailedCreate",
		LastTransitionTime: mtime("2026-11-29T11:59:00Z"), LastUpdateTime: mtime("2026-11-29T11:59:00Z"),
		Message: `pods "exporter-6c5d4b3a2f-" is forbidden: exceeded quota: compute, requested: limits.memory=256Mi, used: limits.memory=1792Mi, limited: limits.memory=2Gi`})
	c["create-failed"] = fixture{g: g, parent: p, children: observeAll(p, d, k, st, "")}.converged()

	g.statefulFailures(c)
}

// beforeUpgrade: statuses the previous stackdome version wrote.
func (g *fixtureGen) beforeUpgrade(c map[string]fixture) {
	// 18. the serving app as the previous stackdome version left its status
	// after a verdict: Serving, every port Open, no portCheck. A replica of
	// this version that has no verdict yet keeps it. Private: a public app also
	// gains the ErrorPages condition (new in 0.2.0) at its first sync after the
	// upgrade, stamped then (hooks TestUpgradeAddsTheErrorPagesCondition); this
	// case isolates the verdict carried over, and its answer holds at any time.
	p, k := g.newParent("cart", "shop", `{"type":"Service","image":"ghcr.io/acme/cart:3.2","replicas":2,
		"ports":[{"name":"http","port":8080},{"name":"metrics","port":9090}]}`)
	d := fixture{g: g, parent: p}.desired()
	dep := d["Deployment/cart"]
	rev := revisionOf(dep)
	serving := [4][2]string{{"True", "Serving"}, {"True", "Serving"}, {"False", "Serving"}, {"False", "Serving"}}
	p["status"] = legacyStatus(rev, "cart serves: ports 8080 (http), 9090 (metrics) open", serving,
		[][3]any{{"http", 8080, "Open"}, {"metrics", 9090, "Open"}}, nil, nil)
	c["serving-verified-before-upgrade"] = fixture{g: g, parent: p, children: observeAll(p, d, k, depStatus(2, 2, 2, 2, newRSAvailable), ""),
		pods: podObjects(pod("cart-"+rev+"-abcde", p, dep, "127.0.0.181", k, podOpts{}), pod("cart-"+rev+"-fghij", p, dep, "127.0.0.182", k+1, podOpts{}))}

	// 19. condemned by the previous version (window keyed by the spec revision, no checkedAt):
	// still condemned, nothing dialed; the message of that version stands until something changes.
	p, k = g.newParent("search-api", "shop", `{"type":"Service","image":"ghcr.io/acme/search-api:1.1",
		"ports":[{"name":"http","port":8080},{"name":"admin","port":9091}]}`)
	d = fixture{g: g, parent: p}.desired()
	dep = d["Deployment/search-api"]
	rev = revisionOf(dep)
	podName := "search-api-" + rev + "-qazws"
	detail := "port 9091 (admin) refused connection on pod " + podName + ": nothing listens there"
	refused := [4][2]string{{"False", "PortNotListening"}, {"False", "PortNotListening"}, {"True", "PortNotListening"}, {"False", "PortNotListening"}}
	p["status"] = legacyStatus(rev, detail+" since 2026-11-29T11:40:00Z (past the 3m0s grace); roll out a fix to check again", refused,
		[][3]any{{"http", 8080, "Open"}, {"admin", 9091, "Closed"}}, map[string]any{"revision": rev, "failingSince": fixtureEarlier},
		[]any{map[string]any{"type": "readiness_failure", "reason": "PortNotListening", "message": detail, "container": "app", "port": 9091,
			"revision": rev, "observedAt": "2026-11-29T11:43:10Z"}})
	c["condemned-before-upgrade"] = fixture{g: g, parent: p, children: observeAll(p, d, k, running1, ""),
		pods: podObjects(pod(podName, p, dep, "127.0.0.191", k, podOpts{}))}
}

func (g *fixtureGen) statefulFailures(c map[string]fixture) {
	// 22. a StatefulSet rollout blocked under OrderedReady: pod 0 is not Ready on the old revision.
	p, k := g.newParent("zk", "data", `{"type":"StatefulService","image":"ghcr.io/acme/zk:3.9.3","replicas":3,"ports":[{"name":"client","port":2181}]}`)
	d := fixture{g: g, parent: p}.desired()
	ss := d["StatefulSet/zk"]
	old := mcrequest.Clone(ss)
	mcrequest.Map(old, "spec", "template", "metadata", "annotations")["stackdome.io/revision"] = "1f2e3d4c5b"
	mcrequest.Container(old, schema.ContainerName)["image"] = "ghcr.io/acme/zk:3.9.2"
	sst := obj(`{"observedGeneration":2,"replicas":3,"readyReplicas":2,"currentReplicas":2,"updatedReplicas":1,"availableReplicas":2,
		"currentRevision":"zk-7c8d9f6b5","updateRevision":"zk-5f6b7c8d9","collisionCount":0}`)
	objs := observeAll(p, d, k, sst, "StatefulSet")
	mcrequest.Meta(findKind(g.t, objs, "StatefulSet"))["generation"] = 2
	zk := func(name string, wl mcrequest.Object, ip, hash string, ready bool, n int) corev1.Pod {
		return statefulPod(pod(name, p, wl, ip, n, podOpts{notReady: !ready}), "zk", hash)
	}
	c["rollout-blocked"] = fixture{g: g, parent: p, children: objs, pods: podObjects(zk("zk-0", old, "127.0.0.221", "zk-7c8d9f6b5", false, k),
		zk("zk-1", old, "127.0.0.222", "zk-7c8d9f6b5", true, k+1), zk("zk-2", ss, "127.0.0.223", "zk-5f6b7c8d9", true, k+2))}.converged()

	// 23. spec.storage.size edited on an object admitted before the CEL rule,
	// on a verified app: the StatefulSet keeps its claim template, every other
	// change still applies, status names the change not applied.
	p, k = g.newParent("orders-db", "shop", `{"type":"StatefulService","image":"mysql:8.4","ports":[{"name":"mysql","port":3306}],
		"storage":{"size":"20Gi","mountPath":"/var/lib/mysql","storageClassName":"ssd"}}`)
	d = fixture{g: g, parent: p}.desired()
	ss = d["StatefulSet/orders-db"]
	sst = obj(`{"observedGeneration":1,"replicas":1,"readyReplicas":1,"currentReplicas":1,"updatedReplicas":1,"availableReplicas":1,
		"currentRevision":"orders-db-6d7c8b9f5","updateRevision":"orders-db-6d7c8b9f5","collisionCount":0}`)
	objs = observeAll(p, d, k, sst, "StatefulSet")
	zpod := pod("orders-db-0", p, ss, "127.0.0.231", k, podOpts{})
	delete(zpod.Labels, "pod-template-hash")
	zpod.Labels["controller-revision-hash"] = "orders-db-6d7c8b9f5"
	f := fixture{g: g, parent: p, children: objs, pods: podObjects(zpod)}.withSpec(func(s map[string]any) {
		mcrequest.Map(s, "storage")["size"] = "50Gi"
	})
	f.parent["status"] = legacyStatus(revisionOf(ss), "orders-db serves: port 3306 (mysql) open",
		[4][2]string{{"True", "Serving"}, {"True", "Serving"}, {"False", "Serving"}, {"False", "Serving"}},
		[][3]any{{"mysql", 3306, "Open"}}, map[string]any{"revision": "orders-db-6d7c8b9f5", "checkedAt": "2026-11-29T11:41:02.250000Z"}, nil)
	c["storage-not-applied"] = f.converged()
}
