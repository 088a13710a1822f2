//go:build e2e

package framework

// The platform the real-node proofs run on, every part of it pods of the
// real node from their images: Metacontroller as docs/install.md installs
// it, Traefik from its pinned chart, and stackdome's chart, each at its
// defaults but for the values a test sets, each with its reason. This is
// the suite's one Traefik setup.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// platform is what is installed once for the run and kept until the node
// stops: Metacontroller and Traefik. It lives in the Suite.
type platform struct {
	mcOnce, traefikOnce sync.Once
	mcErr, traefikErr   error
	traefikIP           string // the Traefik pod's address (web entry point :8000)
}

// TraefikNS is Traefik's namespace: the chart's
// appDefaults.networkPolicy.traefikNamespace default, so the apps' and
// the pages' NetworkPolicies admit it without a value set.
const TraefikNS = "traefik"

// RequireMetacontroller installs Metacontroller once a run: `kubectl apply
// -k` of the pinned source's manifests/production, its StatefulSet's pod
// run by the kubelet from ImageMetacontroller, and waits for it Ready; it
// fails the test (and every later caller's) if that failed.
func (f *NodeFixture) RequireMetacontroller() {
	f.t.Helper()
	p := &f.platform
	p.mcOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		manifests, err := f.MetacontrollerManifests()
		if err != nil {
			p.mcErr = err
			return
		}
		if out, err := f.KubectlRun(ctx, "apply", "-k", manifests); err != nil {
			p.mcErr = fmt.Errorf("kubectl apply -k manifests/production: %w\n%s", err, out)
			return
		}
		p.mcErr = WaitUntil(3*time.Minute, 500*time.Millisecond, "Metacontroller's pod Ready", func() (bool, error) {
			pod, err := f.Kube.Get(ctx, "/api/v1/namespaces/metacontroller/pods/metacontroller-0")
			if err != nil {
				return false, err
			}
			if img := Dig(pod, "spec", "containers").([]any)[0].(Obj)["image"]; img != ImageMetacontroller {
				return false, fmt.Errorf("metacontroller-0 runs %v, want %s", img, ImageMetacontroller)
			}
			return PodReady(pod), fmt.Errorf("phase %v", Dig(pod, "status", "phase"))
		})
	})
	if p.mcErr != nil {
		f.t.Fatal(p.mcErr)
	}
}

// RequireTraefik installs the pinned Traefik chart once a run, as release
// traefik in namespace TraefikNS, and returns its pod's address; it fails
// the test (and every later caller's) if that failed. Values set:
// global.checkNewVersion=false only, because nothing the suite runs dials
// off this machine.
func (f *NodeFixture) RequireTraefik() string {
	f.t.Helper()
	p := &f.platform
	p.traefikOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		dir := filepath.Join(f.Scratch, "traefik-chart")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			p.traefikErr = err
			return
		}
		chart, err := TraefikChartPath(f.Shared, dir)
		if err != nil {
			p.traefikErr = err
			return
		}
		// No --wait: helm would wait for the LoadBalancer Service's
		// address, which no controller here gives; the pod is waited for.
		args := []string{"install", "traefik", chart, "--namespace", TraefikNS, "--create-namespace",
			"--set", "global.checkNewVersion=false"}
		if out, err := f.Helm(ctx, args...); err != nil {
			p.traefikErr = fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, out)
			return
		}
		p.traefikErr = WaitUntil(3*time.Minute, 500*time.Millisecond, "the Traefik chart's pod Ready", func() (bool, error) {
			pods, err := f.Kube.List(ctx, "/api/v1/namespaces/"+TraefikNS+"/pods", "app.kubernetes.io/name=traefik")
			if err != nil || len(pods) != 1 {
				return false, fmt.Errorf("%d pods (%v)", len(pods), err)
			}
			p.traefikIP, _ = Dig(pods[0], "status", "podIP").(string)
			name, _ := Dig(pods[0], "metadata", "name").(string)
			return PodReady(pods[0]), fmt.Errorf("pod %s not Ready", name)
		})
	})
	if p.traefikErr != nil {
		f.t.Fatal(p.traefikErr)
	}
	return p.traefikIP
}

// TearDownPlatform removes Metacontroller and Traefik, whether the
// Require methods or docs/install.md installed them (the same release and
// namespaces), and forgets them: the next Require installs them again.
func (f *NodeFixture) TearDownPlatform() {
	t := f.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if out, err := f.Helm(ctx, "uninstall", "traefik", "--namespace", TraefikNS, "--ignore-not-found", "--wait"); err != nil {
		t.Errorf("helm uninstall traefik: %v\n%s", err, out)
	}
	if out, err := f.KubectlRun(ctx, "delete", "namespace", TraefikNS, "--ignore-not-found", "--wait", "--timeout=2m"); err != nil {
		t.Errorf("deleting namespace %s: %v\n%s", TraefikNS, err, out)
	}
	manifests, err := f.MetacontrollerManifests()
	if err != nil {
		t.Fatal(err)
	}
	if out, err := f.KubectlRun(ctx, "delete", "-k", manifests, "--ignore-not-found", "--wait", "--timeout=2m"); err != nil {
		t.Errorf("kubectl delete -k manifests/production: %v\n%s", err, out)
	}
	f.platform = platform{}
}

// Release is stackdome's chart installed for one test.
type Release struct {
	Name, NS string

	kube *Kube
}

// PodCIDR is the node's spec.podCIDR (kube-controller-manager allocates
// it): the chart's podCIDRs, which has no default. It fails the test if the
// node has none.
func (f *NodeFixture) PodCIDR() string {
	t := f.t
	t.Helper()
	n, err := f.Kube.Get(t.Context(), "/api/v1/nodes/"+f.Node.Name())
	if err != nil {
		t.Fatal(err)
	}
	cidr, _ := Dig(n, "spec", "podCIDR").(string)
	if cidr == "" {
		t.Fatalf("node %s has no spec.podCIDR", f.Node.Name())
	}
	return cidr
}

// InstallChart installs the repository's chart as release stackdome in a
// new namespace with `helm install --wait` (its hooks and error-page
// Deployments Ready on the node), at its defaults except podCIDRs (the
// node's, required) and set; Metacontroller and Traefik first, since the
// chart's crdCheck wants their CRDs. It is uninstalled when the test ends,
// unless the test did; a failed test's log gets the namespace's pods
// described first.
func (f *NodeFixture) InstallChart(set ...string) *Release {
	f.t.Helper()
	return f.InstallChartFrom(f.RepoChart(), set...)
}

// RepoChart is the repository's chart directory.
func (s *Suite) RepoChart() string { return filepath.Join(s.Root, "chart") }

// InstallChartFrom is InstallChart of the chart in dir (a changed copy of
// the repository's).
func (f *NodeFixture) InstallChartFrom(dir string, set ...string) *Release {
	t := f.t
	t.Helper()
	f.RequireMetacontroller()
	f.RequireTraefik()
	r := &Release{Name: "stackdome", NS: f.Namespace(nil), kube: f.Kube}
	args := []string{"install", r.Name, dir, "--namespace", r.NS,
		"--wait", "--timeout", "3m", "--set", "podCIDRs={" + f.PodCIDR() + "}"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out, err := f.Helm(t.Context(), args...)
	t.Cleanup(func() {
		f.DescribePods(r.NS)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if out, err := f.Helm(ctx, "uninstall", r.Name, "--namespace", r.NS, "--wait", "--ignore-not-found"); err != nil {
			t.Errorf("helm uninstall: %v\n%s", err, out)
		}
	})
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return r
}

// Pods are the release's pods of component (controller, error-pages); a
// failure to list them fails t.
func (r *Release) Pods(t *testing.T, component string) []Obj {
	t.Helper()
	pods, err := r.kube.List(t.Context(), "/api/v1/namespaces/"+r.NS+"/pods",
		"app.kubernetes.io/instance="+r.Name+",app.kubernetes.io/component="+component)
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

// TraefikIP is the Traefik pod's address (web entry point :8000) once
// RequireTraefik installed it this run, and "" before.
func (s *Suite) TraefikIP() string { return s.platform.traefikIP }

func (f *NodeFixture) MetacontrollerPod() Obj {
	t := f.t
	t.Helper()
	p, err := f.Kube.Get(t.Context(), "/api/v1/namespaces/metacontroller/pods/metacontroller-0")
	if err != nil {
		t.Fatal(err)
	}
	return p
}
