//go:build e2e

package node

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// What the proofs take from TestMain (main_test.go): the one place that
// names its fields.
func kube() *framework.Kube     { return suite.Cluster.Kube }
func kubeconfig() string        { return suite.Cluster.Kubeconfig }
func realNode() *framework.Node { return suite.Node }
func repoRoot() string          { return suite.Root }
func kubectlBin() string        { return suite.Kubectl }
func scratchDir() string        { return suite.Tmp }

// sharedDir is the directory beside the clone that holds the pinned
// sources (Metacontroller v4.17.2, Traefik's chart 41.3.0); STACKDOME_SHARED
// names another.
func sharedDir() string {
	if s := os.Getenv("STACKDOME_SHARED"); s != "" {
		return s
	}
	return filepath.Join(filepath.Dir(repoRoot()), "shared")
}

// mcManifests is the production kustomization of the pinned Metacontroller
// source, as docs/install.md applies it: the tree e2e/metacontroller/build.sh
// extracts (a cached build returns at once).
func mcManifests() (string, error) {
	dir, err := framework.BuildMetacontroller(repoRoot(), sharedDir())
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "src", "manifests", "production"), nil
}

// newNamespace creates a namespace for one test, with labels (Pod Security
// levels, for one), and deletes it when the test ends.
func newNamespace(t *testing.T, labels map[string]string) string {
	t.Helper()
	l := obj{"stackdome.io/e2e": "true"}
	for k, v := range labels {
		l[k] = v
	}
	o, err := kube().Create(t.Context(), "/api/v1/namespaces", obj{
		"apiVersion": "v1", "kind": "Namespace", "metadata": obj{"generateName": "node-", "labels": l},
	})
	if err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	name := framework.Dig(o, "metadata", "name").(string)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := kube().Do(ctx, "DELETE", "/api/v1/namespaces/"+name, "", nil, nil); err != nil && !framework.IsCode(err, 404) {
			t.Errorf("deleting namespace %s: %v", name, err)
		}
	})
	return name
}

// helm runs bin/helm (`make tools`) against the cluster, its state under
// the run's scratch directory.
func helm(ctx context.Context, args ...string) ([]byte, error) {
	bin := filepath.Join(repoRoot(), "bin", "helm")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("no bin/helm (make tools): %w", err)
	}
	home := filepath.Join(scratchDir(), "helm")
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(args, "--kubeconfig", kubeconfig())...)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
		"KUBECONFIG="+kubeconfig(),
	)
	return cmd.CombinedOutput()
}

// kubectl runs the suite's kubectl (e2e/kubectl/build.sh) against the
// cluster.
func kubectl(ctx context.Context, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlBin(), args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig())
	return cmd.CombinedOutput()
}

// waitFor polls cond every interval until it holds, failing the test with
// the last error cond gave after timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	if err := framework.WaitUntil(timeout, 250*time.Millisecond, what, cond); err != nil {
		t.Fatal(err)
	}
}

// restate registers, before the test's other cleanups so that it runs
// after them all, a cleanup that logs what last says if the test failed:
// a failing test's dumps (pods described, their logs) come after its
// error, and a reader of the end of a long log — CI's report keeps the
// lines nearest "--- FAIL" — would see the dumps alone.
func restate(t *testing.T, last func() string) {
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s failed %s", t.Name(), last())
		}
	})
}

// srPath is the REST path of the StackResources of ns (name "" for the
// collection).
func srPath(ns, name string) string {
	p := "/apis/stackdome.io/v1alpha1/namespaces/" + ns + "/stackresources"
	if name != "" {
		p += "/" + name
	}
	return p
}

// createApp creates the StackResource name in ns with spec.
func createApp(t *testing.T, ns, name string, spec obj) {
	t.Helper()
	if _, err := kube().Create(t.Context(), srPath(ns, ""), obj{
		"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource",
		"metadata": obj{"name": name}, "spec": spec,
	}); err != nil {
		t.Fatalf("creating StackResource %s/%s: %v", ns, name, err)
	}
}

// srCondition is the status condition of type typ of a StackResource, or
// nil.
func srCondition(sr obj, typ string) obj {
	cs, _ := framework.Dig(sr, "status", "conditions").([]any)
	for _, c := range cs {
		if m, ok := c.(obj); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

// waitCondition waits until the StackResource's condition typ has status
// and reason, and returns the StackResource.
func waitCondition(t *testing.T, timeout time.Duration, ns, name, typ, status, reason string) obj {
	t.Helper()
	var sr obj
	waitFor(t, timeout, fmt.Sprintf("%s/%s %s=%s %s", ns, name, typ, status, reason), func() (bool, error) {
		var err error
		if sr, err = kube().Get(t.Context(), srPath(ns, name)); err != nil {
			return false, err
		}
		c := srCondition(sr, typ)
		if c == nil || c["status"] != status || c["reason"] != reason {
			return false, fmt.Errorf("%s is %v", typ, c)
		}
		return true, nil
	})
	return sr
}

// appPods waits until exactly n pods of the app name in ns are Running
// and Ready (the kubelet's word) and returns them.
func appPods(t *testing.T, ns, name string, n int, timeout time.Duration) []obj {
	t.Helper()
	var pods []obj
	waitFor(t, timeout, fmt.Sprintf("%d ready pod(s) of %s/%s", n, ns, name), func() (bool, error) {
		var err error
		pods, err = kube().List(t.Context(), "/api/v1/namespaces/"+ns+"/pods", "app.kubernetes.io/instance="+name)
		if err != nil {
			return false, err
		}
		ready := 0
		for _, p := range pods {
			if framework.Dig(p, "metadata", "deletionTimestamp") == nil && podReady(p) {
				ready++
			}
		}
		return ready == n && len(pods) == n, fmt.Errorf("%d pods, %d ready", len(pods), ready)
	})
	return pods
}

// podReady is the pod's Ready condition, as the kubelet reports it.
func podReady(p obj) bool {
	cs, _ := framework.Dig(p, "status", "conditions").([]any)
	for _, c := range cs {
		if framework.Dig(c, "type") == "Ready" {
			return framework.Dig(c, "status") == "True"
		}
	}
	return false
}

// describePods is `kubectl describe pods` of ns, for a failed test's log.
func describePods(t *testing.T, ns string) {
	t.Helper()
	if !t.Failed() {
		return
	}
	out, _ := kubectl(context.Background(), "describe", "pods", "-n", ns)
	t.Logf("kubectl describe pods -n %s:\n%s", ns, framework.Indent(strings.TrimSpace(string(out))))
	// The containers' own words, the crashed ones' last run too.
	for _, prev := range []string{"false", "true"} {
		out, _ = kubectl(context.Background(), "logs", "-n", ns, "--all-containers", "--prefix", "--tail=15",
			"--selector=app.kubernetes.io/instance", "--previous="+prev)
		t.Logf("kubectl logs -n %s --previous=%s:\n%s", ns, prev, framework.Indent(strings.TrimSpace(string(out))))
	}
}
