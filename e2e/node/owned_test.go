//go:build e2e

package node

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

// ownedKinds are the collections, by Kind, of every child stackdome makes
// for a Service or StatefulService (docs/reference.md), EndpointSlices
// included: what ownedChildren lists.
var ownedKinds = map[string]string{
	"Deployment":              "/apis/apps/v1/namespaces/%s/deployments",
	"StatefulSet":             "/apis/apps/v1/namespaces/%s/statefulsets",
	"Service":                 "/api/v1/namespaces/%s/services",
	"EndpointSlice":           "/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices",
	"IngressRoute":            "/apis/traefik.io/v1alpha1/namespaces/%s/ingressroutes",
	"Middleware":              "/apis/traefik.io/v1alpha1/namespaces/%s/middlewares",
	"PodDisruptionBudget":     "/apis/policy/v1/namespaces/%s/poddisruptionbudgets",
	"NetworkPolicy":           "/apis/networking.k8s.io/v1/namespaces/%s/networkpolicies",
	"HorizontalPodAutoscaler": "/apis/autoscaling/v2/namespaces/%s/horizontalpodautoscalers",
}

// ownedChildren are the children the StackResource name of ns has in the
// API server, as sorted Kind/name: the objects of ownedKinds whose
// ownerReferences name it as controller (Metacontroller's adoption).
// kube-controller-manager's EndpointSlices of an app's Service are the
// Service's, not the StackResource's, and are not among them.
func ownedChildren(t *testing.T, ns, name string) []string {
	t.Helper()
	sr, err := kube().Get(t.Context(), srPath(ns, name))
	if err != nil {
		t.Fatal(err)
	}
	uid := framework.Dig(sr, "metadata", "uid")
	var out []string
	for kind, path := range ownedKinds {
		items, err := kube().List(t.Context(), fmt.Sprintf(path, ns), "")
		if err != nil {
			t.Fatalf("listing %s of %s: %v", kind, ns, err)
		}
		for _, o := range items {
			for _, ref := range toSlice(framework.Dig(o, "metadata", "ownerReferences")) {
				if framework.Dig(ref, "uid") == uid && framework.Dig(ref, "controller") == true {
					out = append(out, kind+"/"+fmt.Sprint(framework.Dig(o, "metadata", "name")))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// sliceAddresses are the addresses of every endpoint of the EndpointSlice
// name of ns, in its order.
func sliceAddresses(t *testing.T, ns, name string) []string {
	t.Helper()
	sl, err := kube().Get(t.Context(), "/apis/discovery.k8s.io/v1/namespaces/"+ns+"/endpointslices/"+name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range toSlice(sl["endpoints"]) {
		for _, a := range toSlice(framework.Dig(e, "addresses")) {
			out = append(out, fmt.Sprint(a))
		}
	}
	return out
}
