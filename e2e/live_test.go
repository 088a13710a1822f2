//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
	"github.com/stackdome/stackdome/internal/loopback"
)

// TestLivePortGate is the whole loop on a real control plane under the real
// Metacontroller: the chart installed (its CompositeController, its hooks
// Service, its pod running `stackdome serve` on the test host), StackResources
// of both types, kube-controller-manager rolling their children out, pods made
// Running and Ready on test-host addresses, real listeners on some declared
// ports and none on others. Past the grace window, each status must name
// exactly the dead ports (docs/reference.md, the row "serving, a port `Closed`
// by a dial made after `failingSince`…"), and further syncs must write nothing:
// no status, no child (read from a watch of the namespace, every event).
func TestLivePortGate(t *testing.T) {
	requireStackResourceCRD(t)
	host := requireHost(t)
	const grace = 2 * time.Second
	rel := newPagesRelease(t, "stackdome")
	// resyncPeriodSeconds 2, not the chart's 60: a terminal verdict asks for
	// no requeue, so the steady state's syncs are the resync's, and two of
	// them a minute apart would make this test last minutes. replicaCount 2,
	// the chart's default (pagesRelease installs one): both hook replicas
	// answer in turn, each dialing for itself, so a sync whose parent
	// predates the other's condemnation meets a replica whose refusal was
	// dialed inside the window (docs/design.md, "A parent older than the
	// status"); the short grace makes such a parent likelier, not rarer.
	rel.install(t, "", "replicaCount=2", "compositeController.resyncPeriodSeconds=2", "config.portCheckGrace="+grace.String(), "config.verdictRequeue=1s")
	ns := newNamespace(t)
	w := watchNamespace(t, ns)

	type app struct {
		name, typ string
		ip        string   // the pod's address on the test host
		open      []string // port names with a listener
		dead      []string // port names with none
		extra     obj      // further spec fields
	}
	apps := []*app{
		{name: "web", typ: "Service", ip: framework.HostAddr(host, 41), open: []string{"http"}, dead: []string{"admin"},
			extra: obj{"host": "web.e2e.test"}},
		{name: "db", typ: "StatefulService", ip: framework.HostAddr(host, 42), open: []string{"sql"}, dead: []string{"metrics", "repl"},
			extra: obj{"storage": obj{"size": "1Gi", "mountPath": "/data"}}},
	}

	numbers := map[string]map[string]int{} // app → port name → number
	start := time.Now()
	for _, a := range apps {
		if err := host.AddAddress(netip.MustParseAddr(a.ip)); err != nil {
			t.Fatal(err)
		}
		numbers[a.name] = map[string]int{}
		// Free port numbers on the pod's own address first; the spec is
		// written with them.
		for _, pn := range a.open {
			l, err := host.Listen(net.JoinHostPort(a.ip, "0"))
			if err != nil {
				t.Fatal(err)
			}
			loopback.Serve(t, l)
			numbers[a.name][pn] = l.Addr().(*net.TCPAddr).Port
		}
		for _, pn := range a.dead {
			l, err := host.Listen(net.JoinHostPort(a.ip, "0"))
			if err != nil {
				t.Fatal(err)
			}
			numbers[a.name][pn] = l.Addr().(*net.TCPAddr).Port
			l.Close()
		}
		var ports []any
		for i, pn := range append(slices.Clone(a.open), a.dead...) {
			p := obj{"name": pn, "port": numbers[a.name][pn]}
			if i == 0 && a.extra["host"] != nil {
				p["public"] = true
			}
			ports = append(ports, p)
		}
		spec := obj{"type": a.typ, "image": "example.invalid/" + a.name + ":1", "replicas": 1, "ports": ports}
		for k, v := range a.extra {
			spec[k] = v
		}
		if _, err := suite.cluster.Kube.Create(t.Context(), "/apis/stackdome.io/v1alpha1/namespaces/"+ns+"/stackresources", obj{
			"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource",
			"metadata": obj{"name": a.name}, "spec": spec,
		}); err != nil {
			t.Fatalf("creating %s: %v", a.name, err)
		}
	}

	for _, a := range apps {
		// The first sync: the children, and a rolling-out status.
		first := syncAnswer(t, ns, a.name, start, 90*time.Second, a.name+": a first sync by Metacontroller", nil)
		if got := conditionReason(first.Response, "Available"); got != "Progressing" {
			t.Errorf("%s: before any pod, Available reason = %q, want Progressing", a.name, got)
		}
	}

	for _, a := range apps {
		pods := waitPods(t, ns, "app.kubernetes.io/instance="+a.name, 1)
		if rev := framework.Dig(pods[0], "metadata", "annotations", "stackdome.io/revision"); rev == nil || rev == "" {
			t.Errorf("%s: pod %v has no stackdome.io/revision annotation", a.name, framework.Dig(pods[0], "metadata", "name"))
		}
		suite.kubelet.RunPod(t, ns, pods[0], a.ip)
	}

	// Metacontroller syncs again as stackdome asks (resyncAfterSeconds, the
	// verdict requeue): the grace starts at the first closed verdict.
	for _, a := range apps {
		ex := syncAnswer(t, ns, a.name, start, grace+60*time.Second, a.name+": a status naming exactly the dead ports", func(resp obj) error {
			return checkDeadPorts(resp, a.dead, a.open, numbers[a.name])
		})
		t.Logf("%s: status naming the dead ports:\n%s", a.name, mustJSON(ex.Response["status"]))
		stored, err := suite.cluster.Kube.Get(t.Context(), stackPath(ns, a.name))
		if err != nil {
			t.Fatal(err)
		}
		if err := framework.WaitUntil(30*time.Second, 200*time.Millisecond, a.name+": the stored status", func() (bool, error) {
			stored, err = suite.cluster.Kube.Get(t.Context(), stackPath(ns, a.name))
			if err != nil {
				return false, err
			}
			err := checkDeadPorts(stored, a.dead, a.open, numbers[a.name])
			return err == nil, err
		}); err != nil {
			t.Error(err)
		}
	}

	// Steady state: two more syncs of each app by Metacontroller (its
	// resync, stackdome's requeue) write nothing, neither status nor child.
	for _, a := range apps {
		mark, since := w.mark(), time.Now()
		syncAnswer(t, ns, a.name, since, 90*time.Second, a.name+": a steady-state sync", nil)
		after := time.Now()
		syncAnswer(t, ns, a.name, after, 90*time.Second, a.name+": a second steady-state sync", nil)
		time.Sleep(time.Second) // its writes, if any, reach the watch
		if ws := w.writesOf(mark, a.name); !ws.none() {
			t.Errorf("%s: writes at steady state: %s", a.name, ws)
		}
	}
	if errs := w.errors(); len(errs) > 0 {
		t.Errorf("watch: %v", errs)
	}
	// Both replicas answered these apps' syncs; a sync held for the dial
	// that decides a grace window is answered 429 (HeldError).
	for _, a := range apps {
		answered, held := map[string]int{}, 0
		for _, ex := range suite.mc.Net.HookCalls("/sync", ns, a.name, start) {
			answered[ex.Endpoint]++
			if ex.Status == http.StatusTooManyRequests {
				held++
			}
		}
		t.Logf("%s: syncs answered by %v, %d held", a.name, answered, held)
		if len(answered) < 2 {
			t.Errorf("%s: syncs answered by %v: not both replicas", a.name, answered)
		}
	}
}

// checkDeadPorts holds the state-table row "serving, a port closed past
// grace": Available=False PortNotListening, Converged=False, Stalled=True
// PortNotListening, one readiness_failure detail per
// dead port with its number and none for an open port, and, when status.ports
// is reported, Closed exactly for the dead ones.
func checkDeadPorts(resp obj, dead, open []string, numbers map[string]int) error {
	var errs []error
	if c := condition(resp, "Available"); c == nil || c["status"] != "False" || c["reason"] != "PortNotListening" {
		errs = append(errs, fmt.Errorf("Available = %v, want False PortNotListening", c))
	}
	if c := condition(resp, "Stalled"); c == nil || c["status"] != "True" || c["reason"] != "PortNotListening" {
		errs = append(errs, fmt.Errorf("Stalled = %v, want True PortNotListening (past the grace the verdict is terminal)", c))
	}
	if c := condition(resp, "Converged"); c == nil || c["status"] != "False" {
		errs = append(errs, fmt.Errorf("Converged = %v, want False", c))
	}
	wantPorts := map[string]bool{}
	for _, pn := range dead {
		wantPorts[strconv.Itoa(numbers[pn])] = true
	}
	gotPorts := map[string]bool{}
	details, _ := framework.Dig(resp, "status", "lastFailureDetails").([]any)
	for _, d := range details {
		if framework.Dig(d, "type") != "readiness_failure" {
			errs = append(errs, fmt.Errorf("failure detail of type %v, want only readiness_failure: %v", framework.Dig(d, "type"), d))
			continue
		}
		gotPorts[fmt.Sprint(framework.Dig(d, "port"))] = true
	}
	if !equalSets(gotPorts, wantPorts) {
		errs = append(errs, fmt.Errorf("readiness_failure ports %v, want %v", keys(gotPorts), keys(wantPorts)))
	}
	if ports, ok := framework.Dig(resp, "status", "ports").([]any); ok {
		for _, p := range ports {
			name, _ := framework.Dig(p, "name").(string)
			want := "Open"
			if slices.Contains(dead, name) {
				want = "Closed"
			}
			if st := framework.Dig(p, "state"); st != want {
				errs = append(errs, fmt.Errorf("status.ports %s state %v, want %s", name, st, want))
			}
		}
	}
	return errors.Join(errs...)
}

func condition(resp obj, typ string) map[string]any {
	conds, _ := framework.Dig(resp, "status", "conditions").([]any)
	for _, c := range conds {
		if c, ok := c.(map[string]any); ok && c["type"] == typ {
			return c
		}
	}
	return nil
}

func conditionReason(resp obj, typ string) string {
	r, _ := condition(resp, typ)["reason"].(string)
	return r
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func mustJSON(v any) string {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
