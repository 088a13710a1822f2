//go:build e2e

package node

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// The full form's faults (TestFaultsSurvived, `make chaos`): the
// error-page pods evicted, the control plane's, the upgrade amid a
// rollout, and the ports that die and come back during the others.

// churn closes port 8080 of the next victim (its pod goes unready: the
// readiness probe is on it) and opens again the one churn closed before,
// marking both moved.
func (fl *fleet) churn(t *testing.T, moved map[string]bool) {
	t.Helper()
	if fl.downs > 0 {
		back := fl.victims[(fl.downs-1)%len(fl.victims)]
		setPort(t, fl.ns, back.name, 8080, "open")
		back.down, back.downSince = false, time.Time{}
		moved[back.name] = true
	}
	next := fl.victims[fl.downs%len(fl.victims)]
	next.down, next.downSince = true, time.Now()
	setPort(t, fl.ns, next.name, 8080, "close")
	moved[next.name] = true
	fl.downs++
}

// setPort asks portapp in every pod of app, on its control port, to open
// or close port.
func setPort(t *testing.T, ns, app string, port int, action string) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	pods, err := f.Kube.List(t.Context(), "/api/v1/namespaces/"+ns+"/pods", "app.kubernetes.io/instance="+app)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) == 0 {
		t.Fatalf("no pod of %s", app)
	}
	for _, p := range pods {
		ip, _ := framework.Dig(p, "status", "podIP").(string)
		if err := portControl(f, t.Context(), ip, port, action); err != nil {
			t.Fatalf("%s: %v", framework.PodName(p), err)
		}
	}
}

// portControl asks portapp at ip, on its control port, to open or close
// port, from the node.
func portControl(f *framework.NodeFixture, ctx context.Context, ip string, port int, action string) error {
	url := "http://" + net.JoinHostPort(ip, strconv.Itoa(framework.PortAppControlPort)) + "/ports/" + strconv.Itoa(port) + "/" + action
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	resp, err := f.Node.HTTPClient().Do(req)
	if err != nil {
		return fmt.Errorf("%s port %d: %w", action, port, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("%s port %d: %s", action, port, resp.Status)
	}
	return nil
}

// evictPods evicts the release's pods of component one at a time, as
// `kubectl drain` does: through the Eviction API, again while a
// PodDisruptionBudget refuses (429), and each time waits until the
// Deployment has all its replicas available again.
func evictPods(t *testing.T, rel *framework.Release, component string) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	for _, p := range rel.Pods(t, component) {
		name := framework.PodName(p)
		path := "/api/v1/namespaces/" + rel.NS + "/pods/" + name
		f.WaitFor(2*time.Minute, "eviction of "+name, func() (bool, error) {
			_, err := f.Kube.Create(t.Context(), path+"/eviction", obj{
				"apiVersion": "policy/v1", "kind": "Eviction",
				"metadata": obj{"name": name, "namespace": rel.NS},
			})
			return err == nil, err
		})
		f.WaitFor(2*time.Minute, name+" gone and "+component+" available again", func() (bool, error) {
			if _, err := f.Kube.Get(t.Context(), path); err == nil || !framework.IsCode(err, http.StatusNotFound) {
				return false, fmt.Errorf("%s still there (%v)", name, err)
			}
			pods, err := f.Kube.List(t.Context(), "/api/v1/namespaces/"+rel.NS+"/pods",
				"app.kubernetes.io/instance="+rel.Name+",app.kubernetes.io/component="+component)
			if err != nil {
				return false, err
			}
			ready := 0
			for _, q := range pods {
				if framework.PodReady(q) {
					ready++
				}
			}
			return ready >= 2, fmt.Errorf("%d of the %s pods ready", ready, component)
		})
	}
}

// restartAPIServer restarts the control plane's kube-apiserver and waits
// until it is ready again.
func restartAPIServer(t *testing.T) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	if err := f.Cluster.RestartAPIServer(t.Context(), 2*time.Minute); err != nil {
		t.Fatal(err)
	}
}

// stallEtcd stops etcd for d, then waits until the API server reads again.
func stallEtcd(t *testing.T, d time.Duration) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	if err := f.Cluster.StallEtcd(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	f.WaitFor(time.Minute, "the API server reading from etcd again", func() (bool, error) {
		_, err := f.Kube.Get(t.Context(), "/api/v1/namespaces/default")
		return err == nil, err
	})
}

// upgradeAmidRollout changes the spec (an env var) of n live apps that no
// churn has touched, so their workloads roll, and while they roll runs
// `helm upgrade` of stackdome with a changed pod template (an annotation),
// which rolls both of its Deployments; it returns once the upgrade has
// rolled out (--wait). The rolled apps are moved and must reach Serving on
// their new generation.
func upgradeAmidRollout(t *testing.T, rel *framework.Release, fl *fleet, n int, moved map[string]bool) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	stamp := strconv.FormatInt(time.Now().Unix(), 10)
	rolled := 0
	for _, a := range fl.apps {
		if rolled == n {
			break
		}
		if a.dead || isVictim(fl, a) {
			continue
		}
		path := framework.SRPath(fl.ns, a.name)
		sr, err := f.Kube.MergePatch(t.Context(), path, obj{"spec": obj{"env": []any{obj{"name": "ROLL", "value": stamp}}}})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Sscan(fmt.Sprint(framework.Dig(sr, "metadata", "generation")), &a.generation)
		moved[a.name] = true
		rolled++
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	out, err := f.Helm(ctx, "upgrade", rel.Name, filepath.Join(f.Root, "chart"), "--namespace", rel.NS,
		"--reuse-values", "--wait", "--timeout", "4m", "--set-string", "podAnnotations.stackdome-e2e/upgraded="+stamp)
	if err != nil {
		t.Fatalf("helm upgrade: %v\n%s", err, out)
	}
}

// isVictim says whether churn may close a's port.
func isVictim(fl *fleet, a *faultApp) bool {
	for _, v := range fl.victims {
		if v == a {
			return true
		}
	}
	return false
}
