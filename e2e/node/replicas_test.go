//go:build e2e

package node

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestReplicasBehindKubeProxy runs the chart's two replicas (its default
// replicaCount) behind its real hooks Service, reached by the real
// Metacontroller through cluster DNS and kube-proxy, which picks a replica
// per connection, and Metacontroller keeps its connections alive. Over a
// settled run of six apps:
//
//   - both replicas answer syncs: each pod's own
//     stackdome_hook_requests_total{hook="sync",code="200"} (read from its
//     /metrics) grows;
//   - no app flaps on the way: once a StackResource reads Converged True,
//     no status write says otherwise (a watch of the StackResources from
//     before they exist);
//   - the syncs through both write nothing: no event of the apps'
//     StackResources, Deployments or Services after the settle (a watch of
//     the namespace, every event after the resourceVersion the run starts
//     at).
//
// Settled is every app Serving and then no status write for three resync
// periods: Metacontroller sends the parent its informer holds, which can
// predate the Serving another sync has just written, and a replica that
// dialed the pod itself answers Serving with its own checkedAt over it,
// one write of bookkeeping (docs/design.md, "A parent older than the
// status"). That settles within a sync; a flap of Converged does not pass
// as settling, it fails the check above.
//
// compositeController.resyncPeriodSeconds=2, not the chart's 60: once
// settled, every sync is a resync, and at one a minute the run would need
// many minutes to send each replica some.
//
// It bites: with replicaCount=1 the second pod's counter does not exist;
// a replica whose answers differed from the other's status would write on
// every resync (TestReplicasAgreeOnRealNode breaks the verdict reading to
// show the writes).
func TestReplicasBehindKubeProxy(t *testing.T) {
	f := framework.NewNodeFixture(t)
	rel := f.InstallChart("compositeController.resyncPeriodSeconds=2")
	ns := f.Namespace(nil)
	t.Cleanup(func() { f.DescribePods(ns) })
	statuses := f.WatchPath("sr", framework.SRPath(ns, ""))
	const apps = 6
	for i := range apps {
		f.CreateApp(ns, fmt.Sprint("app-", i), framework.PortApp(framework.PortArgs("8080", "9090"),
			obj{"name": "http", "port": 8080}, obj{"name": "admin", "port": 9090}))
	}
	for i := range apps {
		f.WaitCondition(3*time.Minute, ns, fmt.Sprint("app-", i), "Available", "True", "Serving")
	}
	controllers := rel.Pods(t, "controller")
	if len(controllers) != 2 {
		t.Fatalf("%d hooks pods, want the chart's 2", len(controllers))
	}

	f.QuietFor(statuses, 6*time.Second, time.Minute)
	for _, f := range convergedFlaps(statuses.Events()) {
		t.Errorf("a flap: %s", f)
	}

	// Settled: start counting.
	list, err := f.Kube.Get(t.Context(), framework.SRPath(ns, ""))
	if err != nil {
		t.Fatal(err)
	}
	startRV, _ := strconv.ParseUint(fmt.Sprint(framework.Dig(list, "metadata", "resourceVersion")), 10, 64)
	ws := []*framework.Watcher{
		f.WatchPath("sr", framework.SRPath(ns, "")),
		f.WatchPath("deployment", "/apis/apps/v1/namespaces/"+ns+"/deployments"),
		f.WatchPath("service", "/api/v1/namespaces/"+ns+"/services"),
	}
	before := map[string]float64{}
	for _, p := range controllers {
		before[framework.PodName(p)] = f.SyncsAnswered(p)
	}
	const run = 40 * time.Second
	time.Sleep(run)
	for _, p := range controllers {
		n := f.SyncsAnswered(p) - before[framework.PodName(p)]
		t.Logf("replica %s answered %.0f syncs in %s", framework.PodName(p), n, run)
		if n == 0 {
			t.Errorf("replica %s answered no sync over the run: kube-proxy sent Metacontroller's connections to one replica", framework.PodName(p))
		}
	}
	var writes []string
	for _, e := range framework.Merged(ws...) {
		if e.RV > startRV {
			what := fmt.Sprintf("%s %s %v rv %d", e.Type, e.Kind, framework.Dig(e.Obj, "metadata", "name"), e.RV)
			if e.Kind == "sr" {
				// What the write said: the reader needs it to tell a
				// flap from bookkeeping.
				status, _ := json.Marshal(framework.Dig(e.Obj, "status"))
				what += ": status " + framework.Clip(string(status), 1500)
			}
			writes = append(writes, what)
		}
	}
	if len(writes) > 0 {
		t.Errorf("%d writes after the settle, want none:\n%s", len(writes), strings.Join(writes, "\n"))
	}
}

// convergedFlaps are the status writes among the StackResource events es
// that say Converged is not True after the same object read True, each
// with its reason and message.
func convergedFlaps(es []framework.WatchEvent) []string {
	converged := map[string]bool{}
	var flaps []string
	for _, e := range es {
		name, _ := framework.Dig(e.Obj, "metadata", "name").(string)
		c := framework.PodCondition(e.Obj, "Converged")
		switch {
		case c["status"] == "True":
			converged[name] = true
		case converged[name] && e.Type != "DELETED":
			flaps = append(flaps, fmt.Sprintf("%s at rv %d: Converged %v %v: %v", name, e.RV, c["status"], c["reason"], c["message"]))
		}
	}
	return flaps
}

// Forwarders to the hooks pods' metrics (framework's hook_metrics.go).

// TestKubectlLogsAndDescribe proves a user's first debugging step works
// in the suite: `kubectl logs` of each of the chart's pods (the API server
// reaching the kubelet's /containerLogs with its client certificate)
// shows stackdome's own JSON log, its "serving" line; `kubectl describe`
// shows the pod Running and Ready with the scheduler's and the kubelet's
// events (Scheduled, Started).
//
// It bites: without the API server's kubelet client certificate
// (ForRealNode's --kubelet-client-certificate) kubectl logs is refused.
func TestKubectlLogsAndDescribe(t *testing.T) {
	f := framework.NewNodeFixture(t)
	rel := f.InstallChart()
	pods := append(rel.Pods(t, "controller"), rel.Pods(t, "error-pages")...)
	if len(pods) == 0 {
		t.Fatal("the release has no pods")
	}
	for _, p := range pods {
		name := framework.PodName(p)
		t.Run(name, func(t *testing.T) {
			f := framework.NewNodeFixture(t)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			out, err := f.KubectlRun(ctx, "logs", "-n", rel.NS, name)
			if err != nil {
				t.Fatalf("kubectl logs: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), `"msg":"serving"`) {
				t.Errorf("kubectl logs %s: no \"serving\" line in:\n%s", name, out)
			}
			out, err = f.KubectlRun(ctx, "describe", "pod", "-n", rel.NS, name)
			if err != nil {
				t.Fatalf("kubectl describe: %v\n%s", err, out)
			}
			for _, want := range []string{"Status:", "Running", "Ready", "Scheduled", "Started", "ghcr.io/stackdome/stackdome:"} {
				if !strings.Contains(string(out), want) {
					t.Errorf("kubectl describe pod %s: no %q in:\n%s", name, want, out)
				}
			}
		})
	}
}

// TestConvergedFlaps holds the check of TestReplicasBehindKubeProxy to
// what it must catch: the two writes of a replica answering VerifyingPorts
// over another's Serving (the hole TestStaleParentNeverUndoesServing in
// hooks closes), and only those.
func TestConvergedFlaps(t *testing.T) {
	sr := func(name, converged, reason string) obj {
		return obj{"metadata": obj{"name": name}, "status": obj{"conditions": []any{
			obj{"type": "Converged", "status": converged, "reason": reason, "message": "m"}}}}
	}
	es := []framework.WatchEvent{
		{Type: "ADDED", Obj: sr("a", "False", "Progressing"), RV: 1},
		{Type: "ADDED", Obj: sr("b", "False", "Progressing"), RV: 2},
		{Type: "MODIFIED", Obj: sr("a", "True", "Serving"), RV: 3},
		{Type: "MODIFIED", Obj: sr("b", "False", "VerifyingPorts"), RV: 4}, // not converged yet: no flap
		{Type: "MODIFIED", Obj: sr("b", "True", "Serving"), RV: 5},
		{Type: "MODIFIED", Obj: sr("a", "False", "VerifyingPorts"), RV: 6}, // the flap
		{Type: "MODIFIED", Obj: sr("a", "True", "Serving"), RV: 7},
		{Type: "MODIFIED", Obj: sr("b", "True", "Serving"), RV: 8}, // bookkeeping: no flap
		{Type: "DELETED", Obj: sr("b", "False", "Progressing"), RV: 9},
	}
	got := convergedFlaps(es)
	want := []string{"a at rv 6: Converged False VerifyingPorts: m"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flaps (-want +got):\n%s", diff)
	}
}
