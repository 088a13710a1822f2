//go:build e2e

package node

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
	"github.com/stackdome/stackdome/e2e/installdoc"
)

// TestInstallDoc runs docs/install.md top to bottom on the real node: every
// shell block, in order, in one bash, with kubectl (built from
// e2e/kubectl), bin/helm and curl, from the repository root. Every pod the
// page makes is a container the node's kubelet runs from its image:
// Metacontroller's StatefulSet from its production manifests, Traefik's
// chart, stackdome's chart and the first app, go-httpbin. A block marked
// `e2e: substituted` runs its stand-in instead (installdoc.Substitutions: what
// needs kind or a registry); a run block that fetches from the internet
// runs with only that replaced by the pinned local copy
// (installdoc.LocalCopies). What kind's port mappings and a cloud's load
// balancer do, Node.Publish does: the page's `curl` commands reach the real
// Traefik on 127.0.0.1:80 and :443 (the quick start's kind node ports) and
// at the load balancer's address (a cluster you already have), through
// kube-proxy's NodePorts. The first block that fails fails the test, with
// its output.
//
// The page installs Metacontroller and Traefik under the names the other
// tests' platform uses: the test removes the platform first, and the page's
// installs afterwards.
func TestInstallDoc(t *testing.T) {
	f := framework.NewNodeFixture(t)
	steps, errs := installdoc.Read(f.Root, installdoc.Substitutions, installdoc.LocalCopies)
	for _, err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	if _, err := os.Stat(filepath.Join(f.Root, "bin", "helm")); err != nil {
		t.Fatalf("bin/helm (make tools): %v", err)
	}
	ctx := t.Context()
	f.TearDownPlatform()
	t.Cleanup(func() { f.TearDownPlatform() })
	t.Cleanup(func() { cleanUpInstallDoc(t) })

	// The registry: the image `make image` built, under the name the page
	// pushes it to.
	img, err := framework.StackdomeImage(ctx, f.Root)
	if err != nil {
		t.Fatal(err)
	}
	pushed := "registry.example.com/platform/stackdome" + img[strings.LastIndex(img, ":"):]
	if err := f.Node.Tag(ctx, img, pushed); err != nil {
		t.Fatal(err)
	}
	// kind's extraPortMappings: the node's ports 30080 and 30443 on
	// 127.0.0.1:80 and :443.
	nodeIP := f.Node.IP().String()
	for addr, nodePort := range map[string]string{"127.0.0.1:80": "30080", "127.0.0.1:443": "30443"} {
		l, err := f.Node.Publish(addr, func() string { return net.JoinHostPort(nodeIP, nodePort) })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
	}
	lb := f.StartLoadBalancer(lbAddress)

	chart, err := framework.TraefikChartPath(f.Shared, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	manifests, err := f.MetacontrollerManifests()
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := []string{}
	for _, e := range framework.WithoutClusterEnv(os.Environ()) {
		// Nothing the page runs may go through a proxy, off this machine.
		if k, _, _ := strings.Cut(e, "="); strings.EqualFold(k, "http_proxy") || strings.EqualFold(k, "https_proxy") || strings.EqualFold(k, "all_proxy") {
			continue
		}
		env = append(env, e)
	}
	env = append(env,
		"PATH="+filepath.Dir(f.Kubectl)+string(os.PathListSeparator)+filepath.Join(f.Root, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECONFIG="+f.Cluster.Kubeconfig,
		"HOME="+home,
		"HELM_CACHE_HOME="+filepath.Join(home, "helm", "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "helm", "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "helm", "data"),
		"E2E_POD_CIDR="+f.PodCIDR(),
		"E2E_METACONTROLLER_MANIFESTS="+manifests,
		"E2E_TRAEFIK_CHART="+chart,
	)
	sh, err := f.StartDocShell(env, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sh.Stop)

	var run, substituted int
	start := time.Now()
	for _, s := range steps {
		what := "as written"
		switch {
		case s.Sub != nil:
			what = "substituted: " + s.Sub.Why
			substituted++
		case len(s.Copies) > 0:
			what = "as written, with the local copy of " + strings.Join(s.Copies, "; ")
			run++
		default:
			run++
		}
		began := time.Now()
		out, err := sh.Run(s.Text, 6*time.Minute)
		t.Logf("%s — %s (%s)\n%s", s.Block, what, time.Since(began).Round(100*time.Millisecond), framework.Indent(framework.Clip(out, 3000)))
		if err != nil {
			f.DescribePods("hello")
			f.DescribePods("stackdome")
			t.Fatalf("%s failed: %v\nthe block:\n%s\nthe load balancer: %s", s.Block, err, installdoc.IndentLines(s.Block.Text), lb.Report())
		}
	}
	t.Logf("%s: %d blocks run as written, %d substituted, in %s, every pod a container of the node; the load balancer: %s",
		installdoc.Page, run, substituted, time.Since(start).Round(time.Second), lb.Report())
}

// lbAddress is the load balancer's address: a loopback address of the
// machine, as the kind node ports' 127.0.0.1 is.
const lbAddress = "127.0.0.2"

// cleanUpInstallDoc removes what the page made, whether it ran to its end
// or not: the app's namespace first, while stackdome's chart and
// Metacontroller still run to let its StackResources go, then stackdome's
// release and namespace.
func cleanUpInstallDoc(t *testing.T) {
	f := framework.NewNodeFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	if out, err := f.KubectlRun(ctx, "delete", "namespace", "hello", "--ignore-not-found", "--wait", "--timeout=2m"); err != nil {
		t.Errorf("deleting namespace hello: %v\n%s", err, out)
	}
	if out, err := f.Helm(ctx, "uninstall", "stackdome", "--namespace", "stackdome", "--ignore-not-found", "--wait"); err != nil {
		t.Errorf("helm uninstall stackdome: %v\n%s", err, out)
	}
	if out, err := f.KubectlRun(ctx, "delete", "namespace", "stackdome", "--ignore-not-found", "--wait", "--timeout=2m"); err != nil {
		t.Errorf("deleting namespace stackdome: %v\n%s", err, out)
	}
}
