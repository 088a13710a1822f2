//go:build e2e

package node

import (
	"slices"
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

// appChildren are the children Metacontroller keeps for the StackResource
// name in ns, as "<resource>/<name>" (services/shop): every object of a
// kind the release's CompositeController lists in childResources whose
// controller is the StackResource. Objects that controllers made from the
// children (a Deployment's ReplicaSet, a Service's own EndpointSlices) are
// not: their controller is the child.
func appChildren(t *testing.T, rel *framework.Release, ns, name string) []string {
	t.Helper()
	f := framework.NewNodeFixture(t)
	ctx := t.Context()
	sr, err := f.Kube.Get(ctx, framework.SRPath(ns, name))
	if err != nil {
		t.Fatal(err)
	}
	uid := framework.Dig(sr, "metadata", "uid")
	cc, err := f.Kube.Get(ctx, "/apis/metacontroller.k8s.io/v1alpha1/compositecontrollers/"+rel.NS+"-"+rel.Name)
	if err != nil {
		t.Fatalf("reading the release's CompositeController: %v", err)
	}
	kinds, _ := framework.Dig(cc, "spec", "childResources").([]any)
	var out []string
	for _, k := range kinds {
		apiVersion, _ := framework.Dig(k, "apiVersion").(string)
		resource, _ := framework.Dig(k, "resource").(string)
		base := "/apis/" + apiVersion
		if apiVersion == "v1" {
			base = "/api/v1"
		}
		items, err := f.Kube.List(ctx, base+"/namespaces/"+ns+"/"+resource, "")
		if err != nil {
			t.Fatalf("listing %s: %v", resource, err)
		}
		for _, o := range items {
			refs, _ := framework.Dig(o, "metadata", "ownerReferences").([]any)
			for _, r := range refs {
				if framework.Dig(r, "controller") == true && framework.Dig(r, "uid") == uid {
					out = append(out, resource+"/"+framework.Dig(o, "metadata", "name").(string))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
