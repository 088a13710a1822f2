//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// newNamespace creates a fresh namespace for one test and deletes it when the
// test ends (the namespace controller removes what is left inside).
func newNamespace(t *testing.T) string {
	t.Helper()
	k := suite.cluster.Kube
	o, err := k.Create(t.Context(), "/api/v1/namespaces", obj{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": obj{"generateName": "e2e-", "labels": obj{"stackdome.io/e2e": "true"}},
	})
	if err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	name := framework.Dig(o, "metadata", "name").(string)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := k.Do(ctx, "DELETE", "/api/v1/namespaces/"+name, "", nil, nil); err != nil && !framework.IsCode(err, 404) {
			t.Errorf("deleting namespace %s: %v", name, err)
		}
	})
	return name
}

// waitPods waits until exactly n pods match selector in ns and returns them.
func waitPods(t *testing.T, ns, selector string, n int) []obj {
	t.Helper()
	var pods []obj
	err := framework.WaitUntil(60*time.Second, 200*time.Millisecond, fmt.Sprintf("%d pod(s) %q in %s", n, selector, ns), func() (bool, error) {
		if err := suite.cluster.Healthy(); err != nil {
			return false, err
		}
		var err error
		pods, err = suite.cluster.Kube.List(t.Context(), "/api/v1/namespaces/"+ns+"/pods", selector)
		if err != nil {
			return false, err
		}
		if len(pods) != n {
			return false, fmt.Errorf("%d pods", len(pods))
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pods
}
