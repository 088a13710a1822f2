//go:build e2e

package node

import (
	"fmt"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestDrainOnRealNode proves graceful termination with the real kubelet,
// kube-proxy-free Traefik routing (Traefik sends to the EndpointSlice's
// addresses) and real signals: an app of two pods behind the pinned
// Traefik, 100 requests a second through Traefik, and one pod deleted
// (`kubectl delete pod`, the pod's own grace period). portapp exits at
// SIGTERM (--on-term exit): listeners and connections gone at once, an app
// without a graceful shutdown of its own.
//
//   - With the default drain (the preStop sleep stackdome gives every app
//     with ports) not one request fails, and the kubelet ran the sleep: the
//     container ended (exit 0: SIGTERM, not SIGKILL) no earlier than the
//     sleep after the deletion.
//   - With drainSeconds: 0 the same deletion fails requests (the subtest
//     fails if none do: the proof bites), and the container ends within a
//     second or two of the deletion. Whether it does is a race between the
//     kubelet's SIGTERM and Traefik's dropping the endpoint, which a
//     loaded machine can tip (a cold CI run, 2026-12-06: 725 requests, none
//     failed), so the control deletes up to three pods, one at a time,
//     and needs one deletion that fails requests.
//   - Either way the app of two has its PodDisruptionBudget child
//     (maxUnavailable 1, controlled by the StackResource), and
//     kube-controller-manager's disruption controller counts both running
//     pods under it: expectedPods 2, disruptionsAllowed 1, so a
//     `kubectl drain` of the node evicts one pod of the two at a time. It
//     bites: without the budget (hooks/internal/children/disruption.go) the
//     GET is a 404; a selector that missed the pods would leave
//     expectedPods at 0.
//
// The chart sets config.entryPoints={web}: the requests are plain HTTP on
// Traefik's web entry point; TLS is not what is proved.
func TestDrainOnRealNode(t *testing.T) {
	f := framework.NewNodeFixture(t)
	f.InstallChart("config.entryPoints={web}")
	tests := []struct {
		name  string
		drain any // spec.drainSeconds; nil: the default
		fails bool
	}{
		{name: "default drain", fails: false},
		{name: "drainSeconds 0", drain: 0, fails: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := framework.NewNodeFixture(t)
			ns := f.Namespace(nil)
			t.Cleanup(func() { f.DescribePods(ns) })
			const name, host = "checkout", "checkout.node.test"
			spec := framework.PortApp(append(framework.PortArgs("8080"), "--on-term", "exit"), obj{"name": "http", "port": 8080, "public": true})
			spec["host"], spec["replicas"] = host, 2
			if tc.drain != nil {
				spec["drainSeconds"] = tc.drain
			}
			podWatch := f.WatchPath("pod", "/api/v1/namespaces/"+ns+"/pods")
			f.CreateApp(ns, name, spec)
			f.WaitCondition(3*time.Minute, ns, name, "Available", "True", "Serving")
			requireDisruptionBudget(t, ns, name, 2)
			// The drain loses nothing in one deletion; the control needs
			// one of up to three that fails requests (the race above).
			rounds := map[bool]int{true: 3, false: 1}[tc.fails]
			for round := 1; round <= rounds; round++ {
				failed := deleteUnderLoad(t, f, podWatch, ns, name, host, tc.name, tc.drain != nil)
				switch {
				case !tc.fails && failed > 0:
					t.Errorf("%d requests failed with the drain", failed)
				case !tc.fails || failed > 0:
					return
				case round < rounds:
					t.Logf("%s: deletion %d of %d lost no request: Traefik dropped the endpoint before the kubelet's SIGTERM; again", tc.name, round, rounds)
				default:
					t.Errorf("no request failed without a drain in %d deletions: the test does not prove the drain", rounds)
				}
			}
		})
	}
}

// deleteUnderLoad deletes one of the app's two ready pods (`kubectl
// delete pod`, its own grace period) under 100 requests a second through
// Traefik, counted from when Traefik sends to both, and two seconds more
// once the pod is gone. It checks what the kubelet did from the watch:
// the container ended at SIGTERM (exit 0), after the preStop sleep, or
// within 3 s without one. It returns how many requests failed.
func deleteUnderLoad(t *testing.T, f *framework.NodeFixture, podWatch *framework.Watcher, ns, name, host, label string, noDrain bool) int {
	t.Helper()
	pods := f.AppPods(ns, name, 2, time.Minute)
	victim, _ := framework.Dig(pods[0], "metadata", "name").(string)
	other, _ := framework.Dig(pods[1], "metadata", "name").(string)
	sleep := preStopSleep(pods[0])
	if want := map[bool]int{true: 0, false: 5}[noDrain]; sleep != want {
		t.Fatalf("pod %s: preStop sleep %ds, want %d", victim, sleep, want)
	}

	l := f.StartLoad(host, 100)
	f.WaitFor(time.Minute, "Traefik sending to both pods", func() (bool, error) {
		s := l.Servers()
		return s[victim] > 0 && s[other] > 0, fmt.Errorf("answers by pod: %v", s)
	})
	l.Reset() // counted from here: Traefik routes to both pods
	f.WaitFor(time.Minute, "100 requests to both pods", func() (bool, error) { return l.Total() >= 100, nil })
	deleted := time.Now()
	if out, err := f.KubectlRun(t.Context(), "delete", "pod", "-n", ns, victim, "--wait=true"); err != nil {
		l.Stop()
		t.Fatalf("kubectl delete pod: %v\n%s", err, out)
	}
	gone := time.Since(deleted)
	before := l.Total()
	// Two seconds more under load once the pod is gone.
	f.WaitFor(time.Minute, "200 more requests", func() (bool, error) { return l.Total() >= before+200, nil })
	total, failed := l.Stop()
	t.Logf("%s: preStop sleep %ds; the pod was gone %s after the deletion; %d requests through Traefik, %d failed",
		label, sleep, gone.Round(100*time.Millisecond), total, len(failed))
	if total < 400 {
		t.Errorf("the load made only %d requests", total)
	}
	if !noDrain && len(failed) > 0 {
		t.Logf("the first failures: %v", failed[:min(len(failed), 5)])
	}

	// What the kubelet did: the container's end, from the watch.
	term, deletedAt := terminated(podWatch.Events(), victim)
	if term == nil || deletedAt.IsZero() {
		t.Fatalf("the watch saw no terminated app container of %s with a deletionTimestamp", victim)
	}
	fin, _ := time.Parse(time.RFC3339, fmt.Sprint(term["finishedAt"]))
	took := fin.Sub(deletedAt) // both to the second
	t.Logf("%s: container exited %v (%v) %s after the deletion", label, term["exitCode"], term["reason"], took)
	if fmt.Sprint(term["exitCode"]) != "0" {
		t.Errorf("the app container exited %v (%v), want 0: portapp exits at SIGTERM; anything else is SIGKILL", term["exitCode"], term["reason"])
	}
	if sleep > 0 && took < time.Duration(sleep-1)*time.Second {
		t.Errorf("the container ended %s after the deletion, before the %ds preStop sleep could end: the kubelet did not run it", took, sleep)
	}
	if sleep == 0 && took > 3*time.Second {
		t.Errorf("the container ended %s after the deletion without a preStop: SIGTERM came late", took)
	}
	return len(failed)
}

// requireDisruptionBudget fails t unless the StackResource name in ns has
// its PodDisruptionBudget child of the same name (maxUnavailable 1, its
// controller the StackResource) and, within 30 s, the disruption
// controller counts pods pods under it with one disruption allowed.
func requireDisruptionBudget(t *testing.T, ns, name string, pods int) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	path := "/apis/policy/v1/namespaces/" + ns + "/poddisruptionbudgets/" + name
	var pdb obj
	f.WaitFor(30*time.Second, fmt.Sprintf("PodDisruptionBudget %s counting %d pods", name, pods), func() (bool, error) {
		var err error
		if pdb, err = f.Kube.Get(t.Context(), path); err != nil {
			return false, err
		}
		st := fmt.Sprint(framework.Dig(pdb, "status", "expectedPods"), " ", framework.Dig(pdb, "status", "disruptionsAllowed"))
		return st == fmt.Sprint(pods, " ", 1), fmt.Errorf("status expectedPods, disruptionsAllowed: %s", st)
	})
	if got := fmt.Sprint(framework.Dig(pdb, "spec", "maxUnavailable")); got != "1" {
		t.Errorf("PodDisruptionBudget %s: maxUnavailable %s, want 1", name, got)
	}
	var owned bool
	for _, r := range framework.ToSlice(framework.Dig(pdb, "metadata", "ownerReferences")) {
		if framework.Dig(r, "kind") == "StackResource" && framework.Dig(r, "name") == name && framework.Dig(r, "controller") == true {
			owned = true
		}
	}
	if !owned {
		t.Errorf("PodDisruptionBudget %s: ownerReferences %v, want the StackResource as controller", name, framework.Dig(pdb, "metadata", "ownerReferences"))
	}
}

// preStopSleep is the app container's preStop sleep in seconds, 0 if none.
func preStopSleep(pod obj) int {
	for _, c := range framework.ToSlice(framework.Dig(pod, "spec", "containers")) {
		if framework.Dig(c, "name") == "app" {
			var n int
			fmt.Sscan(fmt.Sprint(framework.Dig(c, "lifecycle", "preStop", "sleep", "seconds")), &n)
			return n
		}
	}
	return 0
}

// terminated finds, among the pod events, the app container's terminated
// state of pod and when the pod was deleted.
func terminated(events []framework.WatchEvent, pod string) (obj, time.Time) {
	var term obj
	var deleted time.Time
	for _, e := range events {
		if framework.Dig(e.Obj, "metadata", "name") != pod {
			continue
		}
		// deletionTimestamp is when the grace period ends: the deletion
		// was deletionGracePeriodSeconds before it.
		if s, ok := framework.Dig(e.Obj, "metadata", "deletionTimestamp").(string); ok && deleted.IsZero() {
			var grace int
			fmt.Sscan(fmt.Sprint(framework.Dig(e.Obj, "metadata", "deletionGracePeriodSeconds")), &grace)
			end, _ := time.Parse(time.RFC3339, s)
			deleted = end.Add(-time.Duration(grace) * time.Second)
		}
		for _, cs := range framework.ToSlice(framework.Dig(e.Obj, "status", "containerStatuses")) {
			if framework.Dig(cs, "name") != "app" {
				continue
			}
			if tm, ok := framework.Dig(cs, "state", "terminated").(obj); ok {
				term = tm
			}
		}
	}
	return term, deleted
}
