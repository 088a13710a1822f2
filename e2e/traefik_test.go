//go:build e2e

package e2e

import (
	"net/netip"
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

// traefikHostByte is the last byte of the test-host address of the Traefik a
// test installs (framework.HostAddr): one test at a time holds it.
const traefikHostByte = 70

// traefikTestValues are the chart values of every test's Traefik, each
// with its reason; the rest are the chart's defaults.
var traefikTestValues = []string{
	// The IngressClass is cluster-scoped: one release a test, one at a time,
	// and none of the suite's apps names a class.
	"ingressClass.enabled=false",
	// Traefik's own default (the chart sets true): the tests prove the
	// error-page wiring never needs an empty Service to be routable.
	"providers.kubernetesCRD.allowEmptyServices=false",
	// The tests reach websecure in plain HTTP except where a route asks for
	// TLS (tls: {}), as they did with Traefik's own defaults; docs/install.md's
	// Traefik (TestInstallDoc) keeps the chart's TLS on websecure.
	"ports.websecure.http.tls.enabled=false",
	// The tests read Traefik's routers from /api on the traefik entry point.
	"api.insecure=true",
	// Nothing the suite runs dials off this machine.
	"global.checkNewVersion=false",
}

// installTraefik installs Traefik's pinned chart for the test, in a
// namespace of its own, and returns its entry points (the pod's address on
// the test host). It is uninstalled when the test ends.
func installTraefik(t *testing.T) *framework.Traefik {
	t.Helper()
	requireHost(t)
	if suite.traefikErr != nil {
		t.Fatal(suite.traefikErr)
	}
	ns := newNamespace(t)
	ip := netip.MustParseAddr(framework.HostAddr(suite.host, traefikHostByte))
	return suite.traefikChart.Install(t, ns, ip, traefikTestValues...)
}
