//go:build e2e

package node

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestRefusedServiceReadsNotCreated is #25's "a child the API server
// refuses is invisible in status" on the real node: in a namespace whose
// ResourceQuota allows no Service (services: "0", counted by
// kube-controller-manager's quota controller before the app exists), the
// API server refuses the app's Service at every sync. Metacontroller posts
// its SyncError event naming "exceeded quota" on the StackResource, applies
// the other children (the kubelet runs the pod) and writes the hook's
// status anyway, so each next sync request comes back without the Service.
// Read from the stored StackResource (a watch from before it exists):
//
//   - the first status says Available Progressing (inside stackdome's 30 s
//     settle time nothing is decided);
//   - not before the settle time is over (less 2 s for the clocks),
//     Available and Converged False, Stalled True, each ChildNotCreated,
//     the message naming Service/shop, `kubectl describe sr -n <ns> shop`
//     and reason=SyncError; both commands the message names, run, show
//     Metacontroller's SyncError naming the quota; the Service is a 404;
//   - the quota deleted, Metacontroller creates the Service and the status
//     converges: Available True Serving, childrenMissingSince gone.
//
// The chart sets compositeController.resyncPeriodSeconds=2 (the chart's
// is 60): Metacontroller retries a failed sync with an exponential backoff,
// tens of seconds long past the settle time; the resync keeps the steps to
// seconds. config.verdictRequeue=1s for the same reason.
// errorPages.enabled=false: the app's one Service is then the only one the
// quota refuses (with pages, its <name>-error-pages Service is refused too).
//
// It bites: with a missing public Service not counted against serving
// (servesWithout in hooks/internal/status/children.go) the stored status
// says Available True ChildNotCreated and the test fails on it; a status
// that decided ChildNotCreated without waiting out the settle time would
// fail the timing check.
func TestRefusedServiceReadsNotCreated(t *testing.T) {
	f := framework.NewNodeFixture(t)
	const settle = 30 * time.Second // hooks.Config.ChildSettle's default
	f.InstallChart("compositeController.resyncPeriodSeconds=2", "config.verdictRequeue=1s", "errorPages.enabled=false")
	ns := f.Namespace(nil)
	t.Cleanup(func() { f.DescribePods(ns) })
	const name = "shop"

	quotas := "/api/v1/namespaces/" + ns + "/resourcequotas"
	if _, err := f.Kube.Create(t.Context(), quotas, obj{"apiVersion": "v1", "kind": "ResourceQuota",
		"metadata": obj{"name": "no-services"}, "spec": obj{"hard": obj{"services": "0"}}}); err != nil {
		t.Fatalf("creating the quota: %v", err)
	}
	// The quota admission refuses by the quota's status: wait for the
	// quota controller to have counted.
	f.WaitFor(30*time.Second, "the quota controller counting the namespace's Services", func() (bool, error) {
		q, err := f.Kube.Get(t.Context(), quotas+"/no-services")
		if err != nil {
			return false, err
		}
		return framework.Dig(q, "status", "hard", "services") == "0", fmt.Errorf("status %v", framework.Dig(q, "status"))
	})

	srs := f.WatchPath("sr", framework.SRPath(ns, ""))
	spec := framework.PortApp(framework.PortArgs("8080"), obj{"name": "http", "port": 8080, "public": true})
	spec["host"] = "shop.node.test"
	created := time.Now()
	f.CreateApp(ns, name, spec)

	// Metacontroller's own word for the refusal: its SyncError event.
	var refused string
	f.WaitFor(time.Minute, "Metacontroller's SyncError event on shop naming the quota", func() (bool, error) {
		evs, err := f.Kube.List(t.Context(), "/api/v1/namespaces/"+ns+"/events", "")
		if err != nil {
			return false, err
		}
		for _, e := range evs {
			msg, _ := framework.Dig(e, "message").(string)
			if framework.Dig(e, "involvedObject", "name") == name && framework.Dig(e, "reason") == "SyncError" && strings.Contains(msg, "exceeded quota") {
				refused = msg
				return true, nil
			}
		}
		return false, fmt.Errorf("%d events, none a SyncError naming the quota", len(evs))
	})
	t.Logf("Metacontroller: %s", refused)

	sr := f.WaitCondition(settle+90*time.Second, ns, name, "Converged", "False", "ChildNotCreated")
	var first, notCreated *framework.WatchEvent
	for _, e := range srs.Events() {
		if framework.SRCondition(e.Obj, "Available") != nil && first == nil {
			first = &e
		}
		if c := framework.SRCondition(e.Obj, "Converged"); c != nil && c["reason"] == "ChildNotCreated" && notCreated == nil {
			notCreated = &e
		}
	}
	if first == nil || notCreated == nil {
		t.Fatalf("the watch saw no status (first %v) or no ChildNotCreated (%v)", first, notCreated)
	}
	if c := framework.SRCondition(first.Obj, "Available"); c["reason"] != "Progressing" {
		t.Errorf("first status at rv %d: Available %v %v, want Progressing (inside the settle time)", first.RV, c["status"], c["reason"])
	}
	took := notCreated.At.Sub(created)
	t.Logf("ChildNotCreated stored %s after the StackResource was created", took.Round(100*time.Millisecond))
	if took < settle-2*time.Second {
		t.Errorf("ChildNotCreated after %s, inside the %s settle time", took.Round(100*time.Millisecond), settle)
	}
	for typ, want := range map[string]string{"Available": "False", "Converged": "False", "Stalled": "True"} {
		if c := framework.SRCondition(sr, typ); c == nil || c["status"] != want || c["reason"] != "ChildNotCreated" {
			t.Errorf("%s = %v, want %s ChildNotCreated", typ, c, want)
		}
	}
	msg := fmt.Sprint(framework.SRCondition(sr, "Converged")["message"])
	describe := "kubectl describe sr -n " + ns + " " + name
	for _, part := range []string{"Service/shop was not created", describe, "reason=SyncError"} {
		if !strings.Contains(msg, part) {
			t.Errorf("message %q does not say %q", msg, part)
		}
	}
	// What the message tells the user to run shows the refusal.
	for _, args := range [][]string{
		{"describe", "sr", "-n", ns, name},
		{"get", "events", "-n", ns, "--field-selector", "involvedObject.name=" + name + ",reason=SyncError"},
	} {
		out, err := f.KubectlRun(t.Context(), args...)
		if err != nil {
			t.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
			continue
		}
		if !strings.Contains(string(out), "SyncError") || !strings.Contains(string(out), "exceeded quota") {
			t.Errorf("kubectl %s shows no SyncError naming the quota:\n%s", strings.Join(args, " "), out)
		}
	}
	if _, err := f.Kube.Get(t.Context(), "/api/v1/namespaces/"+ns+"/services/"+name); !framework.IsCode(err, 404) {
		t.Errorf("the Service under a quota of zero Services: %v, want 404", err)
	}

	// The quota lifted: Metacontroller's next sync creates the Service,
	// the one after sees it.
	if err := f.Kube.Do(t.Context(), "DELETE", quotas+"/no-services", "", nil, nil); err != nil {
		t.Fatalf("deleting the quota: %v", err)
	}
	lifted := time.Now()
	sr = f.WaitCondition(90*time.Second, ns, name, "Converged", "True", "Serving")
	t.Logf("Serving %s after the quota was deleted", time.Since(lifted).Round(100*time.Millisecond))
	if c := framework.SRCondition(sr, "Available"); c == nil || c["status"] != "True" || c["reason"] != "Serving" {
		t.Errorf("after the Service was created: Available %v, want True Serving", c)
	}
	if s := framework.Dig(sr, "status", "childrenMissingSince"); s != nil {
		t.Errorf("childrenMissingSince %v kept once every child is observed", s)
	}
	if _, err := f.Kube.Get(t.Context(), "/api/v1/namespaces/"+ns+"/services/"+name); err != nil {
		t.Errorf("the Service: %v", err)
	}
}
