//go:build e2e

package node

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// The platform the proofs run on, every part of it pods of the real node
// from their images: Metacontroller as docs/install.md installs it, Traefik
// from its pinned chart, and stackdome's chart, each at its defaults but
// for the values a test sets, each with its reason.

// platform holds what is installed once for the package and kept until the
// node stops: Metacontroller and Traefik.
var platform struct {
	mcOnce, traefikOnce sync.Once
	mcErr, traefikErr   error
	traefikIP           string // the Traefik pod's address (web entry point :8000)
}

// traefikNS is Traefik's namespace: the chart's
// appDefaults.networkPolicy.traefikNamespace default, so the apps' and
// the pages' NetworkPolicies admit it without a value set.
const traefikNS = "traefik"

// requireMetacontroller installs Metacontroller once: `kubectl apply -k` of
// the pinned source's manifests/production, its StatefulSet's pod run by
// the kubelet from ImageMetacontroller, and waits for it Ready.
func requireMetacontroller(t *testing.T) {
	t.Helper()
	platform.mcOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		manifests, err := mcManifests()
		if err != nil {
			platform.mcErr = err
			return
		}
		if out, err := kubectl(ctx, "apply", "-k", manifests); err != nil {
			platform.mcErr = fmt.Errorf("kubectl apply -k manifests/production: %w\n%s", err, out)
			return
		}
		platform.mcErr = framework.WaitUntil(3*time.Minute, 500*time.Millisecond, "Metacontroller's pod Ready", func() (bool, error) {
			p, err := kube().Get(ctx, "/api/v1/namespaces/metacontroller/pods/metacontroller-0")
			if err != nil {
				return false, err
			}
			if img := framework.Dig(p, "spec", "containers").([]any)[0].(obj)["image"]; img != framework.ImageMetacontroller {
				return false, fmt.Errorf("metacontroller-0 runs %v, want %s", img, framework.ImageMetacontroller)
			}
			return podReady(p), fmt.Errorf("phase %v", framework.Dig(p, "status", "phase"))
		})
	})
	if platform.mcErr != nil {
		t.Fatal(platform.mcErr)
	}
}

// requireTraefik installs the pinned Traefik chart once, as release
// traefik in namespace traefik, and returns its pod's address. Values set:
// global.checkNewVersion=false only, because nothing the suite runs dials
// off this machine.
func requireTraefik(t *testing.T) string {
	t.Helper()
	platform.traefikOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		dir := filepath.Join(scratchDir(), "traefik-chart")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			platform.traefikErr = err
			return
		}
		chart, err := framework.TraefikChartPath(sharedDir(), dir)
		if err != nil {
			platform.traefikErr = err
			return
		}
		// No --wait: helm would wait for the LoadBalancer Service's
		// address, which no controller here gives; the pod is waited for.
		args := []string{"install", "traefik", chart, "--namespace", traefikNS, "--create-namespace",
			"--set", "global.checkNewVersion=false"}
		if out, err := helm(ctx, args...); err != nil {
			platform.traefikErr = fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, out)
			return
		}
		platform.traefikErr = framework.WaitUntil(3*time.Minute, 500*time.Millisecond, "the Traefik chart's pod Ready", func() (bool, error) {
			pods, err := kube().List(ctx, "/api/v1/namespaces/"+traefikNS+"/pods", "app.kubernetes.io/name=traefik")
			if err != nil || len(pods) != 1 {
				return false, fmt.Errorf("%d pods (%v)", len(pods), err)
			}
			platform.traefikIP, _ = framework.Dig(pods[0], "status", "podIP").(string)
			return podReady(pods[0]), fmt.Errorf("pod %s not Ready", podName(pods[0]))
		})
	})
	if platform.traefikErr != nil {
		t.Fatal(platform.traefikErr)
	}
	return platform.traefikIP
}

// release is stackdome's chart installed for one test.
type release struct {
	name, ns string
}

// podCIDR is the node's spec.podCIDR (kube-controller-manager allocates
// it): the chart's podCIDRs, which has no default.
func podCIDR(t *testing.T) string {
	t.Helper()
	n, err := kube().Get(t.Context(), "/api/v1/nodes/"+realNode().Name())
	if err != nil {
		t.Fatal(err)
	}
	cidr, _ := framework.Dig(n, "spec", "podCIDR").(string)
	if cidr == "" {
		t.Fatalf("node %s has no spec.podCIDR", realNode().Name())
	}
	return cidr
}

// installChart installs the repository's chart as release stackdome in a
// new namespace with `helm install --wait` (its hooks and error-page
// Deployments Ready on the node), at its defaults except podCIDRs (the
// node's, required) and set; Metacontroller and Traefik first, since the
// chart's crdCheck wants their CRDs. It is uninstalled when the test ends,
// unless the test did.
func installChart(t *testing.T, set ...string) *release {
	t.Helper()
	return installChartFrom(t, repoChart(), set...)
}

// repoChart is the repository's chart directory.
func repoChart() string { return filepath.Join(repoRoot(), "chart") }

// installChartFrom is installChart of the chart in dir (a changed copy of
// the repository's).
func installChartFrom(t *testing.T, dir string, set ...string) *release {
	t.Helper()
	requireMetacontroller(t)
	requireTraefik(t)
	r := &release{name: "stackdome", ns: newNamespace(t, nil)}
	args := []string{"install", r.name, dir, "--namespace", r.ns,
		"--wait", "--timeout", "3m", "--set", "podCIDRs={" + podCIDR(t) + "}"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out, err := helm(t.Context(), args...)
	t.Cleanup(func() {
		describePods(t, r.ns)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if out, err := helm(ctx, "uninstall", r.name, "--namespace", r.ns, "--wait", "--ignore-not-found"); err != nil {
			t.Errorf("helm uninstall: %v\n%s", err, out)
		}
	})
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return r
}

// pods are the release's pods of component (controller, error-pages).
func (r *release) pods(t *testing.T, component string) []obj {
	t.Helper()
	pods, err := kube().List(t.Context(), "/api/v1/namespaces/"+r.ns+"/pods",
		"app.kubernetes.io/instance="+r.name+",app.kubernetes.io/component="+component)
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

// portapp is the spec of an app of the test image: ports as the image's
// args name them (e2e/images/portapp: a port, `port=never`, or
// `port=after:<duration>`), declared as ports (the first public).
func portapp(args []string, ports ...obj) obj {
	ps := make([]any, len(ports))
	for i, p := range ports {
		ps[i] = p
	}
	return obj{"type": "Service", "image": framework.ImagePortApp, "args": toAny(args), "ports": ps}
}

// portArgs are portapp's arguments opening each port as said: "8080",
// "9090=never", "7070=after:20s".
func portArgs(ports ...string) []string {
	var out []string
	for _, p := range ports {
		out = append(out, "--port", p)
	}
	return out
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// tearDownPlatform removes Metacontroller and Traefik, whether the
// platform's requires or docs/install.md installed them (the same release
// and namespaces), and forgets them: the next require installs them again.
func tearDownPlatform(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if out, err := helm(ctx, "uninstall", "traefik", "--namespace", traefikNS, "--ignore-not-found", "--wait"); err != nil {
		t.Errorf("helm uninstall traefik: %v\n%s", err, out)
	}
	if out, err := kubectl(ctx, "delete", "namespace", traefikNS, "--ignore-not-found", "--wait", "--timeout=2m"); err != nil {
		t.Errorf("deleting namespace %s: %v\n%s", traefikNS, err, out)
	}
	manifests, err := mcManifests()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := kubectl(ctx, "delete", "-k", manifests, "--ignore-not-found", "--wait", "--timeout=2m"); err != nil {
		t.Errorf("kubectl delete -k manifests/production: %v\n%s", err, out)
	}
	platform.mcOnce, platform.traefikOnce = sync.Once{}, sync.Once{}
	platform.mcErr, platform.traefikErr, platform.traefikIP = nil, nil, ""
}
