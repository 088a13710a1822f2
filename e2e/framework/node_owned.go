//go:build e2e

package framework

// What stackdome's apps own in the API server: their children by
// ownerReference, and the addresses of an EndpointSlice.

import (
	"fmt"
	"slices"
	"sort"
)

// ownedKinds are the collections, by Kind, of every child stackdome makes
// for a Service or StatefulService (docs/reference.md), EndpointSlices
// included: what OwnedChildren lists.
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

// OwnedChildren are the children the StackResource name of ns has in the
// API server, as sorted Kind/name: the objects of ownedKinds whose
// ownerReferences name it as controller (Metacontroller's adoption).
// kube-controller-manager's EndpointSlices of an app's Service are the
// Service's, not the StackResource's, and are not among them. A failure to read them fails the test.
func (f *NodeFixture) OwnedChildren(ns, name string) []string {
	t := f.t
	t.Helper()
	sr, err := f.Kube.Get(t.Context(), SRPath(ns, name))
	if err != nil {
		t.Fatal(err)
	}
	uid := Dig(sr, "metadata", "uid")
	var out []string
	for kind, path := range ownedKinds {
		items, err := f.Kube.List(t.Context(), fmt.Sprintf(path, ns), "")
		if err != nil {
			t.Fatalf("listing %s of %s: %v", kind, ns, err)
		}
		for _, o := range items {
			for _, ref := range anySlice(Dig(o, "metadata", "ownerReferences")) {
				if Dig(ref, "uid") == uid && Dig(ref, "controller") == true {
					out = append(out, kind+"/"+fmt.Sprint(Dig(o, "metadata", "name")))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// SliceAddresses are the addresses of every endpoint of the EndpointSlice
// name of ns, in its order; a failure to read it fails the test.
func (f *NodeFixture) SliceAddresses(ns, name string) []string {
	t := f.t
	t.Helper()
	sl, err := f.Kube.Get(t.Context(), "/apis/discovery.k8s.io/v1/namespaces/"+ns+"/endpointslices/"+name)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range anySlice(sl["endpoints"]) {
		for _, a := range anySlice(Dig(e, "addresses")) {
			out = append(out, fmt.Sprint(a))
		}
	}
	return out
}

// AppChildren are the children Metacontroller keeps for the StackResource
// name in ns, as "<resource>/<name>" (services/shop): every object of a
// kind the release's CompositeController lists in childResources whose
// controller is the StackResource. Objects that controllers made from the
// children (a Deployment's ReplicaSet, a Service's own EndpointSlices) are
// not: their controller is the child.
func (f *NodeFixture) AppChildren(rel *Release, ns, name string) []string {
	t := f.t
	t.Helper()
	ctx := t.Context()
	sr, err := f.Kube.Get(ctx, SRPath(ns, name))
	if err != nil {
		t.Fatal(err)
	}
	uid := Dig(sr, "metadata", "uid")
	cc, err := f.Kube.Get(ctx, "/apis/metacontroller.k8s.io/v1alpha1/compositecontrollers/"+rel.NS+"-"+rel.Name)
	if err != nil {
		t.Fatalf("reading the release's CompositeController: %v", err)
	}
	kinds, _ := Dig(cc, "spec", "childResources").([]any)
	var out []string
	for _, k := range kinds {
		apiVersion, _ := Dig(k, "apiVersion").(string)
		resource, _ := Dig(k, "resource").(string)
		base := "/apis/" + apiVersion
		if apiVersion == "v1" {
			base = "/api/v1"
		}
		items, err := f.Kube.List(ctx, base+"/namespaces/"+ns+"/"+resource, "")
		if err != nil {
			t.Fatalf("listing %s: %v", resource, err)
		}
		for _, o := range items {
			refs, _ := Dig(o, "metadata", "ownerReferences").([]any)
			for _, r := range refs {
				if Dig(r, "controller") == true && Dig(r, "uid") == uid {
					out = append(out, resource+"/"+Dig(o, "metadata", "name").(string))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
