//go:build e2e

package node

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestRealNode is the real node's smoke test: the node is Ready with the pod
// CIDR kube-controller-manager gave it; a pod from an image, placed by
// kube-scheduler, turns Ready only when its readiness probe passes; its
// ClusterIP Service answers the test (from the node's network) and another
// pod, which finds it by `<svc>.<ns>` and the full name through CoreDNS and
// reaches the API server through the kubernetes Service; a
// default-deny NetworkPolicy cuts that pod off within a bound and deleting it
// lets it through again (kube-router); and `kubectl logs` reads the client's
// log (the API server reaching the kubelet with its client certificate).
func TestRealNode(t *testing.T) {
	f := framework.NewNodeFixture(t)
	ctx := t.Context()
	k, n := f.Kube, f.Node
	const ns = "smoke"

	node, err := k.Get(ctx, "/api/v1/nodes/"+n.Name())
	if err != nil {
		t.Fatal(err)
	}
	if cidr := framework.Dig(node, "spec", "podCIDR"); cidr == nil || cidr == "" {
		t.Fatalf("node %s has no spec.podCIDR: kube-router's policy controller needs it", n.Name())
	}

	if _, err := k.Create(ctx, "/api/v1/namespaces", obj{"metadata": obj{"name": ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = k.Do(context.Background(), http.MethodDelete, "/api/v1/namespaces/"+ns, "", nil, nil)
	})

	start := time.Now()
	f.MustCreate("/api/v1/namespaces/"+ns+"/pods", framework.SmokePod("web", framework.ImagePortApp, map[string]string{"app": "web"}, []string{"--port", "8080=after:2s"}, true))
	web := f.WaitPodReady(ns, "web", 90*time.Second)
	t.Logf("pod web Running and Ready %s after it was created, on %v at %v", time.Since(start).Round(100*time.Millisecond),
		framework.Dig(web, "spec", "nodeName"), framework.Dig(web, "status", "podIP"))
	if got := framework.Dig(web, "spec", "nodeName"); got != n.Name() {
		t.Fatalf("pod web is on node %v, want %s (kube-scheduler binds it)", got, n.Name())
	}
	// The probe, not the start, made it Ready: the app opens its port 2 s
	// after it started.
	startedAt := parseTime(t, framework.Dig(web, "status", "containerStatuses").([]any)[0].(map[string]any)["state"].(map[string]any)["running"].(map[string]any)["startedAt"])
	readyAt := parseTime(t, framework.PodCondition(web, "Ready")["lastTransitionTime"])
	if readyAt.Sub(startedAt) < time.Second {
		t.Fatalf("pod web Ready at %s, started at %s: Ready before its probe could pass", readyAt, startedAt)
	}

	svc := f.MustCreate("/api/v1/namespaces/"+ns+"/services", obj{"metadata": obj{"name": "web"},
		"spec": obj{"selector": obj{"app": "web"}, "ports": []obj{{"port": 80, "targetPort": 8080}}}})
	clusterIP := framework.Dig(svc, "spec", "clusterIP").(string)
	hc := n.HTTPClient()
	if err := framework.WaitUntil(30*time.Second, 200*time.Millisecond, "the Service web at "+clusterIP+" from the node", func() (bool, error) {
		body, err := get(hc, "http://"+clusterIP+"/")
		return err == nil && body == "web port 8080", fmt.Errorf("%q, %v", body, err)
	}); err != nil {
		t.Fatal(err)
	}

	// The client also asks the API server through the kubernetes Service,
	// verifying its certificate against the service account's CA: what
	// Metacontroller in a pod does.
	short, full, api := "http://web."+ns+"/", "http://web."+ns+".svc.cluster.local/", "https://kubernetes.default.svc/version"
	f.MustCreate("/api/v1/namespaces/"+ns+"/pods", framework.SmokePod("client", framework.SmokeImage, map[string]string{"app": "client"}, []string{"get", short, full, api}, false))
	f.WaitPodReady(ns, "client", 90*time.Second)
	for _, u := range []string{short, full, api} {
		waitLastAttempt(t, ns, u, "OK", 30*time.Second)
	}

	// kubectl logs: the API server fetches the log from the kubelet.
	out, err := exec.CommandContext(ctx, f.Kubectl, "--kubeconfig", f.Cluster.Kubeconfig, "-n", ns, "logs", "client", "--tail=20").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "OK "+short+" 200 web port 8080") {
		t.Fatalf("kubectl logs client: %v\n%s", err, out)
	}

	f.MustCreate("/apis/networking.k8s.io/v1/namespaces/"+ns+"/networkpolicies", obj{"metadata": obj{"name": "default-deny"},
		"spec": obj{"podSelector": obj{}, "policyTypes": []string{"Ingress"}}})
	start = time.Now()
	waitLastAttempt(t, ns, short, "ERR", 30*time.Second)
	t.Logf("default-deny NetworkPolicy: the client cut off after %s", time.Since(start).Round(100*time.Millisecond))
	if err := k.Do(ctx, http.MethodDelete, "/apis/networking.k8s.io/v1/namespaces/"+ns+"/networkpolicies/default-deny", "", nil, nil); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	waitLastAttempt(t, ns, short, "OK", 30*time.Second)
	t.Logf("NetworkPolicy deleted: the client through again after %s", time.Since(start).Round(100*time.Millisecond))
	t.Logf("memory of the node with two pods:\n%s", framework.Indent(framework.FormatMemory(n.Memory())))
}

// waitLastAttempt waits until the client pod's last attempt at url, read
// from its log, has result ("OK" or "ERR").
func waitLastAttempt(t *testing.T, ns, url, result string, timeout time.Duration) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	if err := framework.WaitUntil(timeout, 500*time.Millisecond, "client's last GET "+url+" "+result, func() (bool, error) {
		var raw []byte
		if err := f.Kube.Do(t.Context(), http.MethodGet, "/api/v1/namespaces/"+ns+"/pods/client/log?tailLines=30", "", nil, &raw); err != nil {
			return false, err
		}
		last := ""
		for _, l := range strings.Split(string(raw), "\n") {
			if f := strings.Fields(l); len(f) >= 3 && f[2] == url {
				last = l
			}
		}
		f := strings.Fields(last)
		return len(f) >= 2 && f[1] == result, fmt.Errorf("last attempt: %q", last)
	}); err != nil {
		t.Fatal(err)
	}
}

func parseTime(t *testing.T, v any) time.Time {
	t.Helper()
	s, _ := v.(string)
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatalf("time %v: %v", v, err)
	}
	return tm
}

func get(c *http.Client, url string) (string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return strings.TrimSpace(string(b)), err
}
