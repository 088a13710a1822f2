//go:build e2e

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"
)

// TestLivePortGate is the whole loop on a real control plane: StackResources
// of both types, children from stackdome's /sync applied as Metacontroller
// applies them, kube-controller-manager rolling them out, pods made Running
// and Ready on 127.0.0.x addresses, real listeners on some declared ports and
// none on others. Synced until past the grace window, each status must name
// exactly the dead ports (docs/design.md, the row "serving, a port `Closed`
// by a dial made after `failingSince`…"), and
// a further sync must write nothing: no status, no child.
func TestLivePortGate(t *testing.T) {
	requireStackResourceCRD(t)
	const grace = 2 * time.Second
	hook := startStackdome(t,
		"--port-check-grace", grace.String(),
		"--verdict-requeue", "1s",
		"--dial-allow", "127.0.0.0/8", "--dial-allow-loopback",
	)
	mc := &metacontroller{kube: suite.cluster.kube, hook: hook}
	ns := newNamespace(t)

	type app struct {
		name, typ string
		ip        string   // the pod's 127.0.0.x
		open      []string // port names with a listener
		dead      []string // port names with none
		extra     obj      // further spec fields
	}
	apps := []*app{
		{name: "web", typ: "Service", ip: "127.0.0.21", open: []string{"http"}, dead: []string{"admin"},
			extra: obj{"host": "web.e2e.test"}},
		{name: "db", typ: "StatefulService", ip: "127.0.0.22", open: []string{"sql"}, dead: []string{"metrics", "repl"},
			extra: obj{"storage": obj{"size": "1Gi", "mountPath": "/data"}}},
	}

	numbers := map[string]map[string]int{} // app → port name → number
	for _, a := range apps {
		numbers[a.name] = map[string]int{}
		// Free port numbers on the pod's own address first; the spec is
		// written with them.
		for _, pn := range a.open {
			l, err := net.Listen("tcp", net.JoinHostPort(a.ip, "0"))
			if err != nil {
				t.Fatal(err)
			}
			serve(t, l)
			numbers[a.name][pn] = l.Addr().(*net.TCPAddr).Port
		}
		for _, pn := range a.dead {
			port, err := closedPort(a.ip)
			if err != nil {
				t.Fatal(err)
			}
			numbers[a.name][pn] = port
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
		if _, err := suite.cluster.kube.create(t.Context(), "/apis/stackdome.io/v1alpha1/namespaces/"+ns+"/stackresources", obj{
			"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource",
			"metadata": obj{"name": a.name}, "spec": spec,
		}); err != nil {
			t.Fatalf("creating %s: %v", a.name, err)
		}
	}

	for _, a := range apps {
		// First sync: the children, and a rolling-out status.
		res, err := mc.sync(t.Context(), ns, a.name)
		if err != nil {
			t.Fatalf("%s: first sync: %v", a.name, err)
		}
		for _, m := range res.notAsSent {
			t.Errorf("%s: child not stored as sent: %s", a.name, m)
		}
		if got := conditionReason(res.response, "Available"); got != "Progressing" {
			t.Errorf("%s: before any pod, Available reason = %q, want Progressing", a.name, got)
		}
	}

	for _, a := range apps {
		pods := waitPods(t, ns, "app.kubernetes.io/instance="+a.name, 1)
		if rev := dig(pods[0], "metadata", "annotations", "stackdome.io/revision"); rev == nil || rev == "" {
			t.Errorf("%s: pod %v has no stackdome.io/revision annotation", a.name, dig(pods[0], "metadata", "name"))
		}
		markPodReady(t, ns, pods[0], a.ip)
	}

	// Sync until every app names its dead ports, or time runs out: the grace
	// starts at the first closed verdict, verdicts arrive within a requeue.
	deadline := time.Now().Add(grace + 30*time.Second)
	for _, a := range apps {
		var last obj
		var lastErr error
		syncs := 0
		for {
			syncs++
			res, err := mc.sync(t.Context(), ns, a.name)
			if err != nil {
				t.Fatalf("%s: sync: %v", a.name, err)
			}
			last = res.response
			lastErr = checkDeadPorts(last, a.dead, a.open, numbers[a.name])
			if lastErr == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		t.Logf("%s: %d syncs; last status:\n%s", a.name, syncs, mustJSON(last["status"]))
		if lastErr != nil {
			t.Errorf("%s: after %s the status does not name exactly the dead ports: %v\nstatus: %s", a.name, grace+30*time.Second, lastErr, mustJSON(last["status"]))
			continue
		}

		// Steady state: Metacontroller syncs again (resync, our own status
		// write); nothing may be written any more.
		for i := range 2 {
			res, err := mc.sync(t.Context(), ns, a.name)
			if err != nil {
				t.Fatalf("%s: steady-state sync: %v", a.name, err)
			}
			if i == 1 && res.statusWritten {
				t.Errorf("%s: status written again at steady state: %s", a.name, mustJSON(res.response["status"]))
			}
			for _, m := range res.notAsSent {
				t.Errorf("%s: child not stored as sent: %s", a.name, m)
			}
			if len(res.childWrites) > 0 {
				t.Errorf("%s: children updated at steady state: %v", a.name, res.childWrites)
			}
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
	details, _ := dig(resp, "status", "lastFailureDetails").([]any)
	for _, d := range details {
		if dig(d, "type") != "readiness_failure" {
			errs = append(errs, fmt.Errorf("failure detail of type %v, want only readiness_failure: %v", dig(d, "type"), d))
			continue
		}
		gotPorts[fmt.Sprint(dig(d, "port"))] = true
	}
	if !equalSets(gotPorts, wantPorts) {
		errs = append(errs, fmt.Errorf("readiness_failure ports %v, want %v", keys(gotPorts), keys(wantPorts)))
	}
	if ports, ok := dig(resp, "status", "ports").([]any); ok {
		for _, p := range ports {
			name, _ := dig(p, "name").(string)
			want := "Open"
			if slices.Contains(dead, name) {
				want = "Closed"
			}
			if st := dig(p, "state"); st != want {
				errs = append(errs, fmt.Errorf("status.ports %s state %v, want %s", name, st, want))
			}
		}
	}
	return errors.Join(errs...)
}

// markPodReady does what a kubelet would: Running, Ready, with a podIP.
func markPodReady(t *testing.T, ns string, pod obj, ip string) {
	t.Helper()
	name := dig(pod, "metadata", "name").(string)
	if _, err := suite.cluster.kube.mergePatch(t.Context(), "/api/v1/namespaces/"+ns+"/pods/"+name+"/status", readyStatus(pod, ip, "")); err != nil {
		t.Fatalf("marking pod %s ready: %v", name, err)
	}
}

// readyStatus is the status patch a kubelet would report for pod running and
// ready at podIP, on a node at hostIP (left out when empty).
func readyStatus(pod obj, podIP, hostIP string) obj {
	now := time.Now().UTC().Format(time.RFC3339)
	var statuses []any
	containers, _ := dig(pod, "spec", "containers").([]any)
	for _, c := range containers {
		statuses = append(statuses, obj{
			"name": dig(c, "name"), "image": dig(c, "image"), "imageID": "",
			"ready": true, "started": true, "restartCount": 0,
			"state": obj{"running": obj{"startedAt": now}},
		})
	}
	st := obj{
		"phase":             "Running",
		"podIP":             podIP,
		"podIPs":            []any{obj{"ip": podIP}},
		"startTime":         now,
		"containerStatuses": statuses,
		"conditions": []any{
			obj{"type": "Ready", "status": "True", "lastTransitionTime": now},
			obj{"type": "ContainersReady", "status": "True", "lastTransitionTime": now},
			obj{"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
		},
	}
	if hostIP != "" {
		st["hostIP"] = hostIP
	}
	return obj{"status": st}
}

// serve accepts and closes connections on l until the test ends.
func serve(t *testing.T, l net.Listener) {
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
}

// closedPort returns a port on ip that refuses connections: listen, close.
func closedPort(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	return port, l.Close()
}

func condition(resp obj, typ string) map[string]any {
	conds, _ := dig(resp, "status", "conditions").([]any)
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
