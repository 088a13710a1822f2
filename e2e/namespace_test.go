//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"testing"
	"time"
)

// newNamespace creates a fresh namespace for one test and deletes it when the
// test ends (the namespace controller removes what is left inside).
func newNamespace(t *testing.T) string {
	t.Helper()
	k := suite.cluster.kube
	o, err := k.create(t.Context(), "/api/v1/namespaces", obj{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": obj{"generateName": "e2e-", "labels": obj{"stackdome.io/e2e": "true"}},
	})
	if err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	name := dig(o, "metadata", "name").(string)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := k.do(ctx, "DELETE", "/api/v1/namespaces/"+name, "", nil, nil); err != nil && !isCode(err, 404) {
			t.Errorf("deleting namespace %s: %v", name, err)
		}
	})
	return name
}

// listItems lists a collection, optionally by label selector, sorted by name.
func listItems(ctx context.Context, path, selector string) ([]obj, error) {
	if selector != "" {
		path += "?labelSelector=" + url.QueryEscape(selector)
	}
	l, err := suite.cluster.kube.get(ctx, path)
	if err != nil {
		return nil, err
	}
	raw, _ := l["items"].([]any)
	items := make([]obj, 0, len(raw))
	for _, it := range raw {
		items = append(items, it.(map[string]any))
	}
	sort.Slice(items, func(i, j int) bool {
		return dig(items[i], "metadata", "name").(string) < dig(items[j], "metadata", "name").(string)
	})
	return items, nil
}

// waitPods waits until exactly n pods match selector in ns and returns them.
func waitPods(t *testing.T, ns, selector string, n int) []obj {
	t.Helper()
	var pods []obj
	err := waitUntil(60*time.Second, 200*time.Millisecond, fmt.Sprintf("%d pod(s) %q in %s", n, selector, ns), func() (bool, error) {
		if err := suite.cluster.healthy(); err != nil {
			return false, err
		}
		var err error
		pods, err = listItems(t.Context(), "/api/v1/namespaces/"+ns+"/pods", selector)
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
