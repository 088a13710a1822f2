//go:build e2e

package framework

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
)

// The node processes that are not Kubernetes components have no bootstrap
// RBAC: their users get the rules their own manifests grant.
const (
	coreDNSUser    = "e2e:coredns"
	kubeRouterUser = "e2e:kube-router"
)

// addonObjects are the cluster-scoped RBAC of CoreDNS (its deployment
// manifest's system:coredns role) and kube-router's policy controller (its
// daemonset manifest's role, without what only its router and service proxy
// need), and the kube-dns Service: pods' resolv.conf names its ClusterIP
// (the kubelet's clusterDNS), and kube-proxy sends it to CoreDNS on the node's
// address through an EndpointSlice that names it (CoreDNS runs as a node
// process, see docs/e2e.md).
func addonObjects(dnsIP, nodeIP netip.Addr) []struct {
	path string
	obj  Obj
} {
	rule := func(groups []string, resources []string, verbs ...string) Obj {
		return Obj{"apiGroups": groups, "resources": resources, "verbs": verbs}
	}
	role := func(name string, rules ...Obj) Obj {
		return Obj{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": Obj{"name": name}, "rules": rules}
	}
	binding := func(name, user string) Obj {
		return Obj{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": Obj{"name": name},
			"roleRef":  Obj{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
			"subjects": []Obj{{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}}}
	}
	port := func(name, proto string) Obj { return Obj{"name": name, "port": 53, "protocol": proto} }
	const roles, bindings = "/apis/rbac.authorization.k8s.io/v1/clusterroles", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"
	return []struct {
		path string
		obj  Obj
	}{
		{roles, role(coreDNSUser,
			rule([]string{""}, []string{"endpoints", "services", "pods", "namespaces"}, "list", "watch"),
			rule([]string{"discovery.k8s.io"}, []string{"endpointslices"}, "list", "watch"))},
		{bindings, binding(coreDNSUser, coreDNSUser)},
		{roles, role(kubeRouterUser,
			rule([]string{""}, []string{"namespaces", "pods", "services", "nodes", "endpoints"}, "get", "list", "watch"),
			rule([]string{"networking.k8s.io"}, []string{"networkpolicies"}, "get", "list", "watch"),
			rule([]string{"discovery.k8s.io"}, []string{"endpointslices"}, "get", "list", "watch"),
			rule([]string{""}, []string{"events"}, "create", "patch"))},
		{bindings, binding(kubeRouterUser, kubeRouterUser)},
		{"/api/v1/namespaces/kube-system/services", Obj{"apiVersion": "v1", "kind": "Service",
			"metadata": Obj{"name": "kube-dns", "namespace": "kube-system", "labels": Obj{"k8s-app": "kube-dns"}},
			"spec":     Obj{"clusterIP": dnsIP.String(), "ports": []Obj{port("dns", "UDP"), port("dns-tcp", "TCP")}}}},
		{"/apis/discovery.k8s.io/v1/namespaces/kube-system/endpointslices", Obj{"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
			"metadata":    Obj{"name": "kube-dns-node", "namespace": "kube-system", "labels": Obj{"kubernetes.io/service-name": "kube-dns"}},
			"addressType": "IPv4",
			"endpoints":   []Obj{{"addresses": []string{nodeIP.String()}, "conditions": Obj{"ready": true}}},
			"ports":       []Obj{port("dns", "UDP"), port("dns-tcp", "TCP")}}},
	}
}

// createAddons creates addonObjects; one that exists already is kept.
func createAddons(ctx context.Context, k *Kube, dnsIP, nodeIP netip.Addr) error {
	for _, o := range addonObjects(dnsIP, nodeIP) {
		if _, err := k.Create(ctx, o.path, o.obj); err != nil && !IsCode(err, http.StatusConflict) {
			return fmt.Errorf("creating %s %v: %w", o.obj["kind"], Dig(o.obj, "metadata", "name"), err)
		}
	}
	return nil
}
