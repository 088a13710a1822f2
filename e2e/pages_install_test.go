//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// pagesRelease is the chart installed with helm in a namespace of its own,
// its error pages served on the test host: the chart's pods (the hooks' and
// the error pages' Deployments) run there (made Running and Ready on the
// test host's address), the real page server (`stackdome serve
// --hooks=false`, as the error-page Deployment runs it) answers on every
// address of the host, and the error-page Service's ClusterIP is one of
// them, standing in for the service proxy of a real cluster.
type pagesRelease struct {
	name, namespace string
	errorService    string // the chart's error-page Service
	clusterIP       netip.Addr
	hooks, pages    *framework.Proc
	uninstalled     bool
	// serveFlags are further flags of the hooks' pod's `stackdome serve`
	// (beside hookFlags): it answers the hooks the real Metacontroller
	// calls through the release's Service, as the chart's hooks pod does.
	serveFlags []string
	// brands: the page server reads the brand file the chart rendered
	// (its <release>-brands ConfigMap), as the chart's pod would.
	brands bool
}

// The chart's error-page port (ports.errorPages and errorPages.service.port).
const pagePort = 8082

// newPagesRelease names a release of the chart in a new namespace; install
// installs it.
func newPagesRelease(t *testing.T, release string) *pagesRelease {
	return &pagesRelease{name: release, namespace: newNamespace(t), errorService: release + "-error-pages"}
}

// install installs chart (suiteChart() unless given) as the release with
// replicaCount=1 and the test host's pod network, plus set, and runs its pod
// on the test host: one `stackdome serve` answering its hooks (hookFlags
// plus serveFlags) and its pages. It is uninstalled when the test ends.
func (r *pagesRelease) install(t *testing.T, chart string, set ...string) {
	t.Helper()
	ctx := t.Context()
	host := suite.host
	if chart == "" {
		chart = suiteChart()
	}
	release := r.name
	args := []string{"install", release, chart, "--namespace", r.namespace, "--timeout", "2m",
		"--set", "replicaCount=1", "--set", "errorPages.replicaCount=1", "--set", "podCIDRs={" + host.Prefix.String() + "}"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	if out, err := helm(ctx, args...); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		if !r.uninstalled {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			helm(ctx, "uninstall", release, "--namespace", r.namespace)
		}
	})
	svc, err := suite.cluster.Kube.Get(ctx, "/api/v1/namespaces/"+r.namespace+"/services/"+r.errorService)
	if err != nil {
		t.Fatal(err)
	}
	if r.clusterIP, err = netip.ParseAddr(fmt.Sprint(framework.Dig(svc, "spec", "clusterIP"))); err != nil {
		t.Fatalf("error-page Service has no ClusterIP: %v", err)
	}
	if err := host.AddAddress(r.clusterIP); err != nil {
		t.Fatal(err)
	}
	// Two pods, two processes, as the chart's two Deployments run them: the
	// hooks' (`--pages=false`) on the host's guest address, which the
	// release's Service sends Metacontroller's hook calls to, and the error
	// pages' (`--hooks=false`) on an address of its own, which the
	// error-page Service selects.
	guest := host.GuestIP.String()
	r.hooks = startHookServer(t, guest, r.hookFlags(r.serveFlags...)...)
	pagesIP := netip.MustParseAddr(framework.HostAddr(host, pagesHostByte))
	if err := host.AddAddress(pagesIP); err != nil {
		t.Fatal(err)
	}
	var pageArgs []string
	if r.brands {
		pageArgs = r.brandsFile(t)
	}
	r.pages = startPageServer(t, pagesIP.String(), pagePort, pageArgs...)
	chartPods := waitPods(t, r.namespace, "app.kubernetes.io/instance="+release+",app.kubernetes.io/component=controller", 1)
	suite.kubelet.RunPod(t, r.namespace, chartPods[0], guest)
	pagePods := waitPods(t, r.namespace, "app.kubernetes.io/instance="+release+",app.kubernetes.io/component=error-pages", 1)
	suite.kubelet.RunPod(t, r.namespace, pagePods[0], pagesIP.String())
	waitReadyAddress(t, r.namespace, r.errorService, pagesIP.String())
}

// pagesHostByte is the last byte of the test-host address the release's
// error-page pod runs on (the hooks' pod has the guest address): in the
// lower half of the /24, below the ClusterIPs.
const pagesHostByte = 90

// brandsFile writes the brands.json of the release's brand ConfigMap to a
// file and returns the page server's flag naming it.
func (r *pagesRelease) brandsFile(t *testing.T) []string {
	t.Helper()
	cm, err := suite.cluster.Kube.Get(t.Context(), "/api/v1/namespaces/"+r.namespace+"/configmaps/"+r.name+"-brands")
	if err != nil {
		t.Fatalf("the chart's brand ConfigMap: %v", err)
	}
	path := filepath.Join(t.TempDir(), "brands.json")
	if err := os.WriteFile(path, []byte(fmt.Sprint(framework.Dig(cm, "data", "brands.json"))), 0o644); err != nil {
		t.Fatal(err)
	}
	return []string{"--brands-file", path}
}

// compositeController is the name of the release's CompositeController
// (the chart's stackdome.compositeControllerName).
func (r *pagesRelease) compositeController() string { return r.namespace + "-" + r.name }

// hookFlags are the flags of a `stackdome serve` answering this release's
// hooks, plus extra.
func (r *pagesRelease) hookFlags(extra ...string) []string {
	return append([]string{
		"--error-service-name", r.errorService,
		"--error-service-namespace", r.namespace,
		"--error-service-port", fmt.Sprint(pagePort),
		"--dial-allow", suite.host.Prefix.String(),
	}, extra...)
}

// uninstall runs helm uninstall now.
func (r *pagesRelease) uninstall(t *testing.T) {
	t.Helper()
	if out, err := helm(t.Context(), "uninstall", r.name, "--namespace", r.namespace); err != nil {
		t.Fatalf("helm uninstall: %v\n%s", err, out)
	}
	r.uninstalled = true
}
