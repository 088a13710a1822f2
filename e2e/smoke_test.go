//go:build e2e

package e2e

import (
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestControlPlane proves the harness itself: the API server is the version
// we built, RBAC is on, the prerequisite CRDs serve, and
// kube-controller-manager turns a Deployment into a ReplicaSet and a Pod.
func TestControlPlane(t *testing.T) {
	f := framework.NewFixture(t)
	ctx := t.Context()
	k := f.Kube

	v, err := k.Get(ctx, "/version")
	if err != nil {
		t.Fatal(err)
	}
	if v["gitVersion"] != framework.ClusterVersion || v["major"] != "1" || v["minor"] != "37" {
		t.Errorf("/version = %v, want gitVersion %s major 1 minor 37", v, framework.ClusterVersion)
	}

	if _, err := k.Get(ctx, "/apis/rbac.authorization.k8s.io/v1/clusterroles/cluster-admin"); err != nil {
		t.Errorf("RBAC bootstrap policy: %v", err)
	}

	for _, p := range []string{
		"/apis/metacontroller.k8s.io/v1alpha1/compositecontrollers",
		"/apis/traefik.io/v1alpha1/ingressroutes",
		"/apis/traefik.io/v1alpha1/middlewares",
	} {
		if _, err := k.Get(ctx, p); err != nil {
			t.Errorf("listing %s: %v", p, err)
		}
	}

	ns := f.Namespace
	dep := obj{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": obj{"name": "smoke"},
		"spec": obj{
			"selector": obj{"matchLabels": obj{"app": "smoke"}},
			"template": obj{
				"metadata": obj{"labels": obj{"app": "smoke"}},
				"spec":     obj{"containers": []any{obj{"name": "app", "image": "example.invalid/smoke:1"}}},
			},
		},
	}
	if _, err := k.Create(ctx, "/apis/apps/v1/namespaces/"+ns+"/deployments", dep); err != nil {
		t.Fatal(err)
	}
	pods := f.WaitPods("app=smoke", 1)
	if phase := framework.Dig(pods[0], "status", "phase"); phase != "Pending" {
		t.Errorf("pod phase = %v, want Pending (there is no kubelet)", phase)
	}
}
