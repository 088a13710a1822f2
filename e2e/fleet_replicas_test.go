//go:build e2e

package e2e

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// The chart's stackdome replicas as processes on the test host, for
// TestFleet (the fleet benchmark): what the real node runs in pods, here
// run beside the kubelet stand-in, which reports their pods running.

// startReplicas runs the chart release's two hook replicas on the test host
// (startReplica), at byte 61 and 62 of its /24, and returns their addresses,
// their processes and the chart's two controller pods, for the
// test to report running (Kubelet.RunPod) when it wants each in the
// Service. Each replica gets flags, then what perIP gives for its address.
func startReplicas(t *testing.T, host *framework.TestHost, release, relNS string, flags []string, perIP ...func(ip string) []string) ([]string, []*framework.Proc, []obj) {
	t.Helper()
	ips := []string{framework.HostAddr(host, 61), framework.HostAddr(host, 62)}
	pods := waitPods(t, relNS, "app.kubernetes.io/instance="+release+",app.kubernetes.io/component=controller", 2)
	procs := make([]*framework.Proc, 2)
	for i, ip := range ips {
		if err := host.AddAddress(netip.MustParseAddr(ip)); err != nil {
			t.Fatal(err)
		}
		own := slices.Clone(flags)
		for _, f := range perIP {
			own = append(own, f(ip)...)
		}
		procs[i] = startReplica(t, ip, own, chartEnv(t, pods[i]))
	}
	return ips, procs, pods
}

// chartEnv is the environment the chart gives its stackdome container in
// pod (GOMAXPROCS from its CPU request, GOMEMLIMIT from its memory limit),
// as the kubelet resolves it.
func chartEnv(t *testing.T, pod obj) []string {
	t.Helper()
	env, err := framework.ContainerEnv(pod, "stackdome")
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// startReplica runs one replica of the chart's pod on the test host at ip:
// `stackdome serve` with hooks on ip:8080 and metrics on ip:8081 (the
// chart's ports), its error pages on ip:8082, and flags, in the chart
// container's environment env (chartEnv).
func startReplica(t *testing.T, ip string, flags, env []string) *framework.Proc {
	t.Helper()
	bin := buildStackdome(t)
	hooks := net.JoinHostPort(ip, "8080")
	args := append([]string{"serve", "--listen", hooks,
		"--error-pages-listen", net.JoinHostPort(ip, "8082"),
		"--metrics-listen", net.JoinHostPort(ip, "8081"),
		"--drain-delay", "0s", "--log-format", "text"}, flags...)
	p, err := suite.host.StartProcEnv(t.TempDir(), "stackdome-"+ip, env, bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop(10 * time.Second) })
	scheme := "http://"
	if slices.Contains(flags, "--tls-cert-file") {
		scheme = "https://" // WaitOK verifies no certificate, as the kubelet
	}
	framework.WaitOK(t, p, 30*time.Second, scheme+hooks+"/readyz")
	return p
}

// secretData reads Secret ns/name's data, decoded.
func secretData(t *testing.T, ns, name string) map[string][]byte {
	t.Helper()
	data, err := suite.cluster.Kube.SecretData(t.Context(), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// hooksTLSFlags writes the release's serving Secret (the chart's
// <release>-hooks-tls) into a directory and returns the --tls-* flags of a
// stackdome the test runs itself in place of the chart's pod.
func hooksTLSFlags(t *testing.T, ns, release string) []string {
	t.Helper()
	dir := t.TempDir()
	for k, b := range secretData(t, ns, release+"-hooks-tls") {
		if err := os.WriteFile(filepath.Join(dir, k), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return []string{"--tls-cert-file", filepath.Join(dir, "tls.crt"), "--tls-key-file", filepath.Join(dir, "tls.key"), "--tls-client-ca-file", filepath.Join(dir, "ca.crt")}
}
