//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
	"github.com/stackdome/stackdome/internal/loopback"
)

// TestReplicasAnswerAlike runs stackdome as the chart does — its two
// replicas, each its own `stackdome serve` with its own verdict cache, on
// two pod addresses behind the chart's hooks Service — under the real
// Metacontroller, which reaches them through the cluster-network stand-in
// (a ready endpoint of the Service each call, in turn), against live
// StackResources. The second replica's first contact, a restart of the
// first, and rechecks write no status for a healthy resource, and none for
// a condemned one either (the same pods stay condemned, even once their
// port answers); a rollout restart of the condemned, fixed workload reads
// Available. Every write is read from a watch of the namespace.
//
// The release's resyncPeriodSeconds is 1 (the chart's default is 60): the
// phases count rounds of syncs of every resource, and a round a minute would
// make this test last a quarter of an hour; a resync is a sync like any
// other to stackdome.
func TestReplicasAnswerAlike(t *testing.T) {
	requireStackResourceCRD(t)
	host := requireHost(t)
	ctx := t.Context()
	k := suite.cluster.Kube
	relNS := newNamespace(t)
	const release = "stackdome"
	if out, err := helm(ctx, "install", release, suiteChart(), "--namespace", relNS, "--timeout", "2m",
		"--set", "replicaCount=2", "--set", "podCIDRs={"+host.Prefix.String()+"}",
		"--set", "compositeController.resyncPeriodSeconds=1"); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		helm(ctx, "uninstall", release, "--namespace", relNS)
	})
	flags := []string{"--port-check-grace", "2s", "--verdict-requeue", "1s",
		"--error-service-name", release + "-error-pages", "--error-service-namespace", relNS,
		"--dial-allow", host.Prefix.String()}
	flags = append(flags, hooksTLSFlags(t, relNS, release)...)
	replicaIPs, replicas, chartPods := startReplicas(t, host, release, relNS, flags)
	// Replica a alone until every status settles, then both.
	suite.kubelet.RunPod(t, relNS, chartPods[0], replicaIPs[0])
	waitReadyAddress(t, relNS, release, replicaIPs[0])

	ns := newNamespace(t)
	w := watchNamespace(t, ns)
	type app struct {
		name, typ, ip string
		open, dead    []string
		numbers       map[string]int
	}
	apps := []*app{
		{name: "web", typ: "Service", ip: framework.HostAddr(host, 51), open: []string{"http", "metrics"}},
		{name: "db", typ: "StatefulService", ip: framework.HostAddr(host, 52), open: []string{"sql"}},
		{name: "api", typ: "Service", ip: framework.HostAddr(host, 53), open: []string{"http"}, dead: []string{"admin"}},
	}
	start := time.Now()
	for _, ap := range apps {
		if err := host.AddAddress(netip.MustParseAddr(ap.ip)); err != nil {
			t.Fatal(err)
		}
		ap.numbers = map[string]int{}
		var ports []any
		for _, pn := range ap.open {
			l, err := host.Listen(net.JoinHostPort(ap.ip, "0"))
			if err != nil {
				t.Fatal(err)
			}
			loopback.Serve(t, l)
			ap.numbers[pn] = l.Addr().(*net.TCPAddr).Port
			ports = append(ports, obj{"name": pn, "port": ap.numbers[pn]})
		}
		for _, pn := range ap.dead {
			l, err := host.Listen(net.JoinHostPort(ap.ip, "0"))
			if err != nil {
				t.Fatal(err)
			}
			ap.numbers[pn] = l.Addr().(*net.TCPAddr).Port
			l.Close()
			ports = append(ports, obj{"name": pn, "port": ap.numbers[pn]})
		}
		if _, err := k.Create(ctx, "/apis/stackdome.io/v1alpha1/namespaces/"+ns+"/stackresources", obj{
			"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource", "metadata": obj{"name": ap.name},
			"spec": obj{"type": ap.typ, "image": "example.invalid/" + ap.name + ":1", "ports": ports},
		}); err != nil {
			t.Fatal(err)
		}
	}
	for _, ap := range apps {
		syncAnswer(t, ns, ap.name, start, 90*time.Second, ap.name+": a first sync", nil)
		suite.kubelet.RunPod(t, ns, waitPods(t, ns, "app.kubernetes.io/instance="+ap.name, 1)[0], ap.ip)
	}

	serving := func(r obj) error {
		if conditionReason(r, "Available") == "Serving" && framework.Dig(condition(r, "Converged"), "status") == "True" {
			return nil
		}
		return fmt.Errorf("status %s", mustJSON(r["status"]))
	}
	condemned := func(r obj) error {
		if framework.Dig(condition(r, "Stalled"), "status") == "True" && conditionReason(r, "Stalled") == "PortNotListening" {
			return nil
		}
		return fmt.Errorf("status %s", mustJSON(r["status"]))
	}
	syncAnswer(t, ns, "web", start, 60*time.Second, "web: Serving", serving)
	syncAnswer(t, ns, "db", start, 60*time.Second, "db: Serving", serving)
	syncAnswer(t, ns, "api", start, 60*time.Second, "api: condemned", condemned)
	for _, ap := range apps {
		settle(t, w, 0, start, ap.name, ap.name+": settled through replica a")
	}

	// quiet waits for rounds syncs of every resource by Metacontroller and
	// fails on any status write or child update among them.
	quiet := func(phase string, rounds int) {
		t.Helper()
		mark, since := w.mark(), time.Now()
		for _, ap := range apps {
			if err := framework.WaitUntil(60*time.Second, 200*time.Millisecond, fmt.Sprintf("%s: %d syncs of %s", phase, rounds, ap.name), func() (bool, error) {
				if err := suite.mc.Healthy(); err != nil {
					return false, err
				}
				n := 0
				for _, c := range suite.mc.Net.HookCalls("/sync", ns, ap.name, since) {
					if c.Status == 200 {
						n++
					}
				}
				return n >= rounds, fmt.Errorf("%d syncs answered", n)
			}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Second) // the last writes, if any, reach the watch
		for _, ap := range apps {
			if ws := w.writesOf(mark, ap.name); !ws.none() {
				t.Errorf("%s: %s: %s", phase, ap.name, ws)
			}
		}
		endpoints := map[string]int{}
		for _, ap := range apps {
			for _, c := range suite.mc.Net.HookCalls("/sync", ns, ap.name, since) {
				endpoints[c.Endpoint]++
			}
		}
		t.Logf("%s: syncs answered by %v", phase, endpoints)
	}
	suite.kubelet.RunPod(t, relNS, chartPods[1], replicaIPs[1])
	waitReadyAddress(t, relNS, release, replicaIPs[1])
	quiet("replica b's first contact, then both in turn", 6)

	replicas[0].Stop(10 * time.Second)
	replicas[0] = startReplica(t, replicaIPs[0], flags, chartEnv(t, chartPods[0]))
	quiet("replica a restarted", 6)

	// The dead port is fixed in place: these pods stay condemned.
	api := apps[2]
	l, err := host.Listen(net.JoinHostPort(api.ip, strconv.Itoa(api.numbers["admin"])))
	if err != nil {
		t.Fatal(err)
	}
	loopback.Serve(t, l)
	quiet("the same pods, now answering", 3)

	// kubectl rollout restart deployment/api: a new ReplicaSet, new pods,
	// verified from scratch.
	old := waitPods(t, ns, "app.kubernetes.io/instance=api", 1)[0]
	restarted := time.Now()
	if _, err := k.MergePatch(ctx, "/apis/apps/v1/namespaces/"+ns+"/deployments/api", obj{"spec": obj{"template": obj{"metadata": obj{
		"annotations": obj{"kubectl.kubernetes.io/restartedAt": time.Now().UTC().Format(time.RFC3339)}}}}}); err != nil {
		t.Fatal(err)
	}
	var fresh obj
	if err := framework.WaitUntil(30*time.Second, 200*time.Millisecond, "a pod of the restarted ReplicaSet", func() (bool, error) {
		pods, err := suite.cluster.Kube.List(ctx, "/api/v1/namespaces/"+ns+"/pods", "app.kubernetes.io/instance=api")
		if err != nil {
			return false, err
		}
		for _, p := range pods {
			if framework.Dig(p, "metadata", "labels", "pod-template-hash") != framework.Dig(old, "metadata", "labels", "pod-template-hash") {
				fresh = p
				return true, nil
			}
		}
		return false, fmt.Errorf("%d pods, all of the old ReplicaSet", len(pods))
	}); err != nil {
		t.Fatal(err)
	}
	freshIP := framework.HostAddr(host, 54)
	if err := host.AddAddress(netip.MustParseAddr(freshIP)); err != nil {
		t.Fatal(err)
	}
	for _, pn := range []string{"http", "admin"} {
		l, err := host.Listen(net.JoinHostPort(freshIP, strconv.Itoa(api.numbers[pn])))
		if err != nil {
			t.Fatal(err)
		}
		loopback.Serve(t, l)
	}
	suite.kubelet.RunPod(t, ns, fresh, freshIP)
	ex := syncAnswer(t, ns, "api", restarted, 60*time.Second, "api: Available after the rollout restart", serving)
	if got := framework.Dig(ex.Response, "status", "portCheck", "revision"); got != framework.Dig(fresh, "metadata", "labels", "pod-template-hash") {
		t.Errorf("portCheck.revision %v, want the new ReplicaSet's pod-template-hash %v", got, framework.Dig(fresh, "metadata", "labels", "pod-template-hash"))
	}
	settle(t, w, w.mark(), time.Now(), "api", "after the rollout restart")
	quiet("after the rollout restart", 3)
}

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
	s, err := suite.cluster.Kube.Get(t.Context(), "/api/v1/namespaces/"+ns+"/secrets/"+name)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	data, _ := framework.Dig(s, "data").(map[string]any)
	for k, v := range data {
		b, err := base64.StdEncoding.DecodeString(fmt.Sprint(v))
		if err != nil {
			t.Fatal(err)
		}
		out[k] = b
	}
	return out
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
