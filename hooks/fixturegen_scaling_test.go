package hooks

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/stackdome/stackdome/internal/mcrequest"
)

// replicaPods are the pods of dep named <name>-<template hash>-<suffix>,
// number k+i, IP ipPrefix(first+i).
func replicaPods(p, dep mcrequest.Object, k, first int, suffixes ...string) []mcrequest.Object {
	var out []corev1.Pod
	h := templateHash(revisionOf(dep))
	for i, sfx := range suffixes {
		out = append(out, pod(fmt.Sprintf("%s-%s-%s", mcrequest.Name(p), h, sfx), p, dep, fmt.Sprintf("127.0.0.%d", first+i), k+i, podOpts{}))
	}
	return podObjects(out...)
}

// scaleTo sets the observed Deployment's replicas, as an autoscaler did.
func scaleTo(objs []mcrequest.Object, replicas int) {
	for _, o := range objs {
		if mcrequest.Str(o, "kind") == "Deployment" {
			mcrequest.Map(o, "spec")["replicas"] = replicas
		}
	}
}

func (g *fixtureGen) placementAndScaling(c map[string]fixture) (last int) {
	// 24. a private image with its own identity: imagePullSecrets, serviceAccountName.
	p, _ := g.newParent("billing-worker", "finance", `{"type":"Service","image":"registry.acme.internal/finance/billing-worker:7.1",
		"imagePullSecrets":[{"name":"acme-registry"}],"serviceAccountName":"billing-worker"}`)
	c["private-image"] = fixture{g: g, parent: p}.converged()

	// 25. security relaxed field by field: a fixed uid and group,
	// NET_BIND_SERVICE for port 80; the rest stays restricted.
	p, _ = g.newParent("edge", "www", `{"type":"Service","image":"ghcr.io/acme/edge:1.0","ports":[{"name":"http","port":80}],
		"podSecurityContext":{"runAsUser":10001,"runAsGroup":10001,"fsGroup":10001},
		"securityContext":{"capabilities":{"drop":["ALL"],"add":["NET_BIND_SERVICE"]},"readOnlyRootFilesystem":true}}`)
	c["security-relaxed"] = fixture{g: g, parent: p}.converged()

	// 26. configuration: every key of a ConfigMap and a Secret in the
	// environment, and files mounted read-only.
	p, _ = g.newParent("notes", "apps", `{"type":"Service","image":"ghcr.io/acme/notes:2.4","ports":[{"name":"http","port":8080}],
		"envFrom":[{"configMapRef":{"name":"notes-config"}},{"secretRef":{"name":"notes-secrets"},"prefix":"SECRET_"}],
		"files":[{"name":"config","mountPath":"/etc/notes","configMap":{"name":"notes-files"}},
		{"name":"tls","mountPath":"/etc/notes/tls","secret":{"secretName":"notes-tls","items":[{"key":"tls.crt","path":"cert.pem"}]}}]}`)
	c["config-files"] = fixture{g: g, parent: p}.converged()

	// 27. placement: a node pool, its taint, zone spread, anti-affinity, and
	// pod annotations and labels.
	p, _ = g.newParent("search-index", "shop", `{"type":"Service","image":"ghcr.io/acme/search-index:5.0","replicas":3,"ports":[{"name":"http","port":9200}],
		"nodeSelector":{"acme.io/pool":"memory"},
		"tolerations":[{"key":"acme.io/dedicated","operator":"Equal","value":"search","effect":"NoSchedule"}],
		"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"ScheduleAnyway"}],
		"affinity":{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[{"weight":100,"podAffinityTerm":{
		"topologyKey":"kubernetes.io/hostname","labelSelector":{"matchLabels":{"app.kubernetes.io/instance":"search-index"}}}}]}},
		"podAnnotations":{"prometheus.io/scrape":"true","prometheus.io/port":"9200"},
		"podLabels":{"team":"search","tier":"backend"}}`)
	c["placement"] = fixture{g: g, parent: p}.converged()

	// 28. autoscaling: the HorizontalPodAutoscaler scaled the Deployment to 3;
	// the answer carries no replicas and the gate judges the live count: 3 of 3
	// ready is Available.
	p, k := g.newParent("catalog", "shop", `{"type":"Service","image":"ghcr.io/acme/catalog:9.2","ports":[{"name":"http","port":8080}],
		"resources":{"requests":{"cpu":"250m","memory":"256Mi"}},"autoscaling":{"minReplicas":2,"maxReplicas":10,"targetCPUUtilizationPercentage":70}}`)
	d := fixture{g: g, parent: p}.desired()
	objs := observeAll(p, d, k, depStatus(3, 3, 3, 3, newRSAvailable), "")
	scaleTo(objs, 3)
	findKind(g.t, objs, "HorizontalPodAutoscaler")["status"] = obj(`{"currentReplicas":3,"desiredReplicas":3,
		"currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{"averageUtilization":74,"averageValue":"185m"}}}]}`)
	c["autoscaling"] = fixture{g: g, parent: p, children: objs, pods: replicaPods(p, d["Deployment/catalog"], k, 241, "aaaaa", "bbbbb", "ccccc")}.converged()

	// 29. TLS from a certificate resolver: the route says certResolver, and plain HTTP to the host
	// redirects to HTTPS (the redirect route once its redirectScheme Middleware exists).
	p, _ = g.newParent("storefront", "shop", `{"type":"Service","image":"ghcr.io/acme/storefront:3.0","host":"store.example.com",
		"ports":[{"name":"http","port":8080,"public":true}],"tls":{"certResolver":"letsencrypt"}}`)
	c["tls-cert-resolver"] = g.observedOnly(p)

	// 30. TLS from a Secret, and three public ports: the primary at /, the api
	// at its own /v1 as the app serves it, the websocket port at /ws stripped
	// before it reaches the app.
	p, _ = g.newParent("chat", "apps", `{"type":"Service","image":"ghcr.io/acme/chat:1.9","host":"chat.example.com","tls":{"secretName":"chat-example-com-tls"},
		"ports":[{"name":"http","port":8080,"public":true},{"name":"api","port":8081,"public":true,"path":"/v1"},
		{"name":"ws","port":8082,"public":true},{"name":"metrics","port":9090}]}`)
	c["tls-extra-public-ports"] = g.observedOnly(p)

	// 31. a production app: every field group together, serving at the autoscaler's 3 replicas.
	p, k = g.newParent("payments-api", "payments", productionSpec)
	f, d := g.running(p, k, depStatus(3, 3, 3, 3, newRSAvailable))
	scaleTo(f.children, 3)
	f.pods = replicaPods(p, d["Deployment/payments-api"], k, 201, "q2w3e", "r4t5y", "u6i7o")
	c["production-app"] = f.converged()

	// 32. a field of a real app slipped past admission wrong (replicas and
	// autoscaling together, on an object of a CRD without the rule):
	// InvalidSpec, the running children kept as last applied.
	p, k = g.newParent("search-api", "apps", `{"type":"Service","image":"ghcr.io/acme/search-api:2.0","replicas":2,"ports":[{"name":"http","port":8080}],
		"resources":{"requests":{"cpu":"200m"}}}`)
	f, d = g.running(p, k, depStatus(2, 2, 2, 2, newRSAvailable))
	f.pods = replicaPods(p, d["Deployment/search-api"], k, 211, "plmok", "ijnuh")
	c["invalid-spec-new-field"] = f.converged().withSpec(func(s map[string]any) {
		s["autoscaling"] = map[string]any{"minReplicas": 2, "maxReplicas": 8}
	}).converged()
	return k
}

// observedOnly is p's fixture with its settled children observed (numbered
// from 0) and no pods yet.
func (g *fixtureGen) observedOnly(p mcrequest.Object) fixture {
	return fixture{g: g, parent: p, children: observeAll(p, g.settled(fixture{g: g, parent: p}), 0, nil, "")}.converged()
}

// productionSpec is the production app's: every field group together.
const productionSpec = `{"type":"Service","image":"registry.acme.internal/payments/api:4.12.1","args":["--config","/etc/payments/config.yaml"],
	"imagePullSecrets":[{"name":"acme-registry"}],"serviceAccountName":"payments-api",
	"env":[{"name":"LOG_FORMAT","value":"json"}],
	"envFrom":[{"configMapRef":{"name":"payments-settings"}},{"secretRef":{"name":"payments-db"}},
	{"configMapRef":{"name":"payments-flags"},"prefix":"FLAG_","rollOnChange":false}],
	"files":[{"name":"config","mountPath":"/etc/payments","configMap":{"name":"payments-config"}},
	{"name":"signing-key","mountPath":"/etc/payments/keys","secret":{"secretName":"payments-signing-key","defaultMode":256}}],
	"resources":{"requests":{"cpu":"500m","memory":"512Mi"},"limits":{"memory":"1Gi"}},
	"autoscaling":{"minReplicas":3,"maxReplicas":12,"targetCPUUtilizationPercentage":65},
	"host":"pay.example.com","hosts":["payments.example.com"],"tls":{"certResolver":"letsencrypt"},
	"middlewares":[{"name":"payments-sso"},{"name":"payments-rate-limit"}],
	"ports":[{"name":"http","port":8080,"public":true},{"name":"webhooks","port":8081,"public":true,"path":"/hooks"},
	{"name":"admin","port":9000,"public":true},{"name":"metrics","port":9090}],
	"healthChecks":{"readiness":{"httpGet":{"path":"/healthz","port":"http"},"periodSeconds":5}},
	"securityContext":{"readOnlyRootFilesystem":true,"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]}},
	"scratch":[{"name":"tmp","mountPath":"/tmp","sizeLimit":"256Mi"}],
	"migration":{"args":["migrate","--config","/etc/payments/config.yaml"]},
	"drainSeconds":10,"terminationGracePeriodSeconds":45,
	"podSecurityContext":{"runAsUser":10001,"fsGroup":10001},
	"nodeSelector":{"acme.io/pool":"general"},
	"tolerations":[{"key":"acme.io/spot","operator":"Exists","effect":"NoSchedule"}],
	"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"topology.kubernetes.io/zone","whenUnsatisfiable":"DoNotSchedule"}],
	"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
	{"matchExpressions":[{"key":"kubernetes.io/arch","operator":"In","values":["amd64","arm64"]}]}]}}},
	"podAnnotations":{"prometheus.io/scrape":"true","prometheus.io/port":"9090"},
	"podLabels":{"team":"payments","cost-center":"cc-4711"}}`
