//go:build e2e

package node

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestNetworkPolicyEnforced proves the NetworkPolicies stackdome and its
// chart make, enforced by the node's policy engine (kube-router): what they
// admit gets through, what they do not is refused, and the refusal is the
// policy's (each ends with the policy removed and the same request let
// through, or the port shown listening from the node, which kube-router
// always admits).
//
// The chart is at its defaults (its hooks and pages policies on) except
// config.entryPoints={web}: the test speaks plain HTTP to Traefik's web
// entry point, and TLS is not what it proves. The app sets
// networkPolicy.enabled: the per-app policy is off by default.
//
// The peer "of another namespace" is Traefik's pod (namespace traefik): a
// route the test adds makes it dial a port its namespace is not admitted to.
// Refused by the policy, Traefik answers 502; admitted, the port's own
// answer.
func TestNetworkPolicyEnforced(t *testing.T) {
	f := framework.NewNodeFixture(t)
	rel := f.InstallChart("config.entryPoints={web}")
	ns := f.Namespace(nil)
	const name, host = "shop", "shop.node.test"
	t.Cleanup(func() { f.DescribePods(ns) })
	// admin opens 30 s after the start: the verdict that finds it open is
	// dialed long after kube-router enforces the policy (about 8 s), so
	// Serving proves the policy admits stackdome's dials to every port.
	spec := framework.PortApp(framework.PortArgs("8080", "9090=after:30s"),
		obj{"name": "http", "port": 8080, "public": true}, obj{"name": "admin", "port": 9090})
	spec["host"] = host
	spec["networkPolicy"] = obj{"enabled": true}
	f.CreateApp(ns, name, spec)
	if _, err := f.Kube.Get(t.Context(), "/apis/networking.k8s.io/v1/namespaces/"+ns+"/networkpolicies/"+name); err != nil {
		f.WaitFor(time.Minute, "the app's NetworkPolicy", func() (bool, error) {
			_, err := f.Kube.Get(t.Context(), "/apis/networking.k8s.io/v1/namespaces/"+ns+"/networkpolicies/"+name)
			return err == nil, err
		})
	}
	pod := f.AppPods(ns, name, 1, 2*time.Minute)[0]
	podName, _ := framework.Dig(pod, "metadata", "name").(string)
	podIP, _ := framework.Dig(pod, "status", "podIP").(string)

	t.Run("stackdome dials every declared port", func(t *testing.T) {
		f := framework.NewNodeFixture(t)
		sr := f.WaitCondition(3*time.Minute, ns, name, "Available", "True", "Serving")
		if got := framework.PortStates(sr); got["http"] != "Open" || got["admin"] != "Open" {
			t.Errorf("status.ports %v, want both Open", got)
		}
	})

	t.Run("Traefik reaches the public port", func(t *testing.T) {
		f := framework.NewNodeFixture(t)
		f.WaitFor(time.Minute, "Traefik routing "+host+" to the app", func() (bool, error) {
			code, body, err := f.ThroughTraefik(t.Context(), host, "/")
			return code == http.StatusOK && strings.Contains(body, podName), fmt.Errorf("%d %q %v", code, body, err)
		})
	})

	// A route to the private port: Traefik's namespace is admitted to the
	// public ports only.
	adminHost := "admin." + host
	addRoute(t, ns, "probe-admin", adminHost, name, 9090)
	t.Run("a pod of another namespace is refused", func(t *testing.T) {
		f := framework.NewNodeFixture(t)
		// The port listens: the node reaches it.
		if err := f.DialFromNode(t.Context(), podIP, 9090); err != nil {
			t.Fatalf("admin port from the node: %v", err)
		}
		requireRefused(t, adminHost)
	})
	t.Run("without the policy the same route gets through", func(t *testing.T) {
		f := framework.NewNodeFixture(t)
		patch := obj{"spec": obj{"networkPolicy": obj{"enabled": false}}}
		if _, err := f.Kube.MergePatch(t.Context(), framework.SRPath(ns, name), patch); err != nil {
			t.Fatal(err)
		}
		f.WaitFor(time.Minute, "Traefik reaching the admin port once the policy is gone", func() (bool, error) {
			code, body, err := f.ThroughTraefik(t.Context(), adminHost, "/")
			return code == http.StatusOK, fmt.Errorf("%d %q %v", code, body, err)
		})
	})

	t.Run("the hooks policy admits Metacontroller only", func(t *testing.T) {
		f := framework.NewNodeFixture(t)
		// Metacontroller's syncs get through: the app above was synced to
		// Serving. Traefik's pod is refused: the hooks speak TLS, so an
		// admitted plain-HTTP request would get Go's 400, not a 502.
		hooksHost := "hooks." + rel.NS + ".node.test"
		addRoute(t, rel.NS, "probe-hooks", hooksHost, rel.Name, 8080)
		requireRefused(t, hooksHost)
		if err := f.Kube.Do(t.Context(), "DELETE", "/apis/networking.k8s.io/v1/namespaces/"+rel.NS+"/networkpolicies/"+rel.Name, "", nil, nil); err != nil {
			t.Fatal(err)
		}
		f.WaitFor(time.Minute, "the hooks' own answer once their policy is gone", func() (bool, error) {
			code, body, err := f.ThroughTraefik(t.Context(), hooksHost, "/")
			return code == http.StatusBadRequest, fmt.Errorf("%d %q %v", code, body, err)
		})
	})

	t.Run("the pages policy admits Traefik", func(t *testing.T) {
		f := framework.NewNodeFixture(t)
		pages := rel.Pods(t, "error-pages")
		if len(pages) == 0 {
			t.Fatal("no error-page pods")
		}
		ip, _ := framework.Dig(pages[0], "status", "podIP").(string)
		// The page straight from the pod (the node is always admitted):
		// a 404, its body the envelope a client without Accept gets.
		wantCode, want, err := f.GetCodeAs(t.Context(), "http://"+net.JoinHostPort(ip, "8082")+"/_errors/404", "nobody.node.test", "")
		if err != nil || wantCode != http.StatusNotFound || want == "" {
			t.Fatalf("the error-page pod's own 404: %d %q %v", wantCode, want, err)
		}
		// The chart's catch-all: a host nobody routes is the pages' 404.
		code, body, err := f.ThroughTraefik(t.Context(), "nobody.node.test", "/")
		if err != nil || code != http.StatusNotFound || body != want {
			t.Errorf("Traefik's answer for an unrouted host: %d %v, body %q; want 404 with the pages' own body %q", code, err, body, want)
		}
	})

	t.Run("with the egress option stackdome still dials pods", func(t *testing.T) {
		f := framework.NewNodeFixture(t)
		// Only the chart's NetworkPolicy changes: networkPolicy.egress
		// restricts what stackdome's pods may connect to.
		if out, err := f.Helm(t.Context(), "upgrade", rel.Name, f.Root+"/chart", "--namespace", rel.NS, "--reuse-values",
			"--wait", "--timeout", "3m", "--set", "networkPolicy.egress.enabled=true"); err != nil {
			t.Fatalf("helm upgrade: %v\n%s", err, out)
		}
		np, err := f.Kube.Get(t.Context(), "/apis/networking.k8s.io/v1/namespaces/"+rel.NS+"/networkpolicies/"+rel.Name)
		if err != nil || !strings.Contains(fmt.Sprint(framework.Dig(np, "spec", "policyTypes")), "Egress") {
			t.Fatalf("the chart's NetworkPolicy restricts no egress: %v %v", framework.Dig(np, "spec", "policyTypes"), err)
		}
		// A new app: new pods, dialed from scratch under the egress policy,
		// its second port open 30 s after the start as above.
		spec := framework.PortApp(framework.PortArgs("8080", "9090=after:30s"), obj{"name": "http", "port": 8080}, obj{"name": "admin", "port": 9090})
		spec["networkPolicy"] = obj{"enabled": true}
		f.CreateApp(ns, "egress", spec)
		sr := f.WaitCondition(3*time.Minute, ns, "egress", "Available", "True", "Serving")
		if got := framework.PortStates(sr); got["http"] != "Open" || got["admin"] != "Open" {
			t.Errorf("status.ports %v, want both Open", got)
		}
	})
}

// requireRefused waits until Traefik answers 502 for host (its dial
// refused) and checks it keeps doing so.
func requireRefused(t *testing.T, host string) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	f.WaitFor(time.Minute, "Traefik refused on "+host, func() (bool, error) {
		code, body, err := f.ThroughTraefik(t.Context(), host, "/")
		return code == http.StatusBadGateway || code == http.StatusGatewayTimeout, fmt.Errorf("%d %q %v", code, body, err)
	})
	for range 5 {
		code, body, err := f.ThroughTraefik(t.Context(), host, "/")
		if code != http.StatusBadGateway && code != http.StatusGatewayTimeout {
			t.Fatalf("%s: %d %q %v, want 502 (refused) every time", host, code, body, err)
		}
	}
}

// addRoute adds a Traefik IngressRoute on the web entry point sending host
// to port of service in ns.
func addRoute(t *testing.T, ns, name, host, service string, port int) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	_, err := f.Kube.Create(t.Context(), "/apis/traefik.io/v1alpha1/namespaces/"+ns+"/ingressroutes", obj{
		"apiVersion": "traefik.io/v1alpha1", "kind": "IngressRoute", "metadata": obj{"name": name},
		"spec": obj{"entryPoints": []any{"web"}, "routes": []any{obj{
			"kind": "Rule", "match": "Host(`" + host + "`)",
			"services": []any{obj{"name": service, "port": port}},
		}}},
	})
	if err != nil {
		t.Fatalf("creating IngressRoute %s/%s: %v", ns, name, err)
	}
}
