//go:build e2e

package node

import (
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestAutoscalerOwnsReplicas proves spec.autoscaling's contract on the
// real node (docs/reference.md): stackdome's Deployment carries no
// replicas, so neither the autoscaler's count nor `kubectl scale` is undone
// by a sync. An app with autoscaling {minReplicas: 2, maxReplicas: 5}
// (resources.requests.cpu 100m, which autoscaling requires):
//
//   - kube-controller-manager's HorizontalPodAutoscaler controller scales
//     the Deployment from the API server's default 1 to minReplicas 2, and
//     both pods run;
//   - a patch of the Deployment's /scale (what `kubectl scale` sends)
//     moves it to 3, and the third pod runs;
//   - after each, Metacontroller syncs the app again (at least three more
//     syncs answered by the release's hooks pods, the app the run's only
//     StackResource), and every event of the Deployment from the count
//     on, read from a watch, keeps the count and leaves Metacontroller's
//     managedFields entry (manager "metacontroller") as it was once the
//     app was Serving: Metacontroller updated no Deployment.
//
// Without a metrics server the autoscaler reads no CPU: it enforces
// minReplicas and otherwise keeps the count it finds, so every count is
// the test's to set.
//
// compositeController.resyncPeriodSeconds=2, not the chart's 60: a resync
// is what would undo the count, and the test waits for some after each
// change.
//
// It bites: with replicas set on the Deployment of an autoscaled spec
// (hooks/internal/children/workload.go, e.g. to minReplicas), the syncs
// after the patch write the count back from 3 to 2 and move
// Metacontroller's entry.
func TestAutoscalerOwnsReplicas(t *testing.T) {
	f := framework.NewNodeFixture(t)
	rel := f.InstallChart("compositeController.resyncPeriodSeconds=2")
	ns := f.Namespace(nil)
	t.Cleanup(func() { f.DescribePods(ns) })
	const name = "catalog"
	depPath := "/apis/apps/v1/namespaces/" + ns + "/deployments/" + name
	deps := f.WatchPath("deployment", "/apis/apps/v1/namespaces/"+ns+"/deployments")

	spec := framework.PortApp(framework.PortArgs("8080"), obj{"name": "http", "port": 8080})
	spec["resources"] = obj{"requests": obj{"cpu": "100m"}}
	spec["autoscaling"] = obj{"minReplicas": 2, "maxReplicas": 5}
	f.CreateApp(ns, name, spec)
	waitReplicas(t, depPath, 2) // the HorizontalPodAutoscaler controller enforces minReplicas
	f.AppPods(ns, name, 2, 2*time.Minute)
	f.WaitCondition(2*time.Minute, ns, name, "Available", "True", "Serving")

	// Metacontroller's entry once the app is Serving: what it applied.
	dep, err := f.Kube.Get(t.Context(), depPath)
	if err != nil {
		t.Fatal(err)
	}
	entry := managerEntry(dep, "metacontroller")
	if entry == "" {
		t.Fatalf("the Deployment has no managedFields entry of manager metacontroller: %s", managers(dep))
	}
	if r := framework.Dig(dep, "spec", "replicas"); fmt.Sprint(r) != "2" {
		t.Fatalf("spec.replicas %v once Serving, want 2", r)
	}
	// eventsKeep checks the Deployment's events from rv from to rv to
	// (0: to the last): each at want replicas, Metacontroller's entry as it
	// was.
	eventsKeep := func(phase string, from, to uint64, want int) {
		t.Helper()
		var seen int
		for _, e := range deps.Events() {
			if e.RV < from || (to != 0 && e.RV >= to) {
				continue
			}
			seen++
			if r := framework.Dig(e.Obj, "spec", "replicas"); fmt.Sprint(r) != strconv.Itoa(want) {
				t.Errorf("%s: %s of the Deployment at rv %d: spec.replicas %v, want %d", phase, e.Type, e.RV, r, want)
			}
			if got := managerEntry(e.Obj, "metacontroller"); got != entry {
				t.Errorf("%s: %s of the Deployment at rv %d: Metacontroller's managedFields entry moved:\nwas %s\nnow %s", phase, e.Type, e.RV, entry, got)
			}
		}
		t.Logf("%s: %d Deployment event(s) from rv %d checked for %d replicas and Metacontroller's entry", phase, seen, from, want)
	}
	// keeps waits for three more syncs, then checks every event from rv
	// from on and the count now.
	keeps := func(phase string, from uint64, want int) {
		t.Helper()
		before := f.HooksAnswered(rel)
		f.WaitFor(time.Minute, phase+": three more syncs answered", func() (bool, error) {
			n := f.HooksAnswered(rel) - before
			return n >= 3, fmt.Errorf("%.0f syncs answered", n)
		})
		eventsKeep(phase, from, 0, want)
		waitReplicas(t, depPath, want)
	}
	served := framework.ResourceVersion(dep)
	keeps("minReplicas", served, 2)

	scale, err := f.Kube.MergePatch(t.Context(), depPath+"/scale", obj{"spec": obj{"replicas": 3}})
	if err != nil {
		t.Fatalf("patching the Deployment's /scale: %v", err)
	}
	scaled := framework.ResourceVersion(scale)
	keeps("scaled to 3", scaled, 3)
	eventsKeep("minReplicas, to the patch", served, scaled, 2)
	f.AppPods(ns, name, 3, 2*time.Minute) // the third pod runs
}

// waitReplicas waits until the Deployment at path has spec.replicas want.
func waitReplicas(t *testing.T, path string, want int) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	f.WaitFor(time.Minute, fmt.Sprintf("%s at %d replicas", path, want), func() (bool, error) {
		d, err := f.Kube.Get(t.Context(), path)
		if err != nil {
			return false, err
		}
		got := framework.Dig(d, "spec", "replicas")
		return fmt.Sprint(got) == strconv.Itoa(want), fmt.Errorf("spec.replicas %v", got)
	})
}

// managerEntry is o's managedFields entries of manager, as JSON ("" if
// none): an update by that manager moves its entry's time and fields.
func managerEntry(o obj, manager string) string {
	var out []any
	for _, m := range framework.ToSlice(framework.Dig(o, "metadata", "managedFields")) {
		if framework.Dig(m, "manager") == manager {
			out = append(out, m)
		}
	}
	if out == nil {
		return ""
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// managers lists o's managedFields managers with their operations, for a
// failure's message.
func managers(o obj) string {
	var out []string
	for _, m := range framework.ToSlice(framework.Dig(o, "metadata", "managedFields")) {
		out = append(out, fmt.Sprint(framework.Dig(m, "manager"), " ", framework.Dig(m, "operation"), " ", framework.Dig(m, "subresource")))
	}
	return fmt.Sprint(out)
}
