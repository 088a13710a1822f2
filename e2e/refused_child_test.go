//go:build e2e

package e2e

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
	"github.com/stackdome/stackdome/internal/loopback"
)

// TestRefusedServiceReadsNotCreated is #25's "a child the API server
// refuses is invisible in status", against the real API server and the real
// Metacontroller: in a namespace whose ResourceQuota allows no Service, the
// app's Service is refused at every sync — Metacontroller posts its SyncError
// event, applies the other children and writes the hook's status anyway — so
// the next request really comes back without it. Inside stackdome's 30s
// settle time the app reads as before; past it, not Available and not
// Converged, Stalled ChildNotCreated naming Service/shop and where
// Metacontroller's events are. Once the quota is lifted the Service is
// created and the status converges (Available Serving).
//
// The release's resyncPeriodSeconds is 2 (the chart's is 60): Metacontroller
// retries a failed sync with an exponential backoff, which after the 30s
// settle time is tens of seconds long; the resync keeps the steps to seconds.
func TestRefusedServiceReadsNotCreated(t *testing.T) {
	requireStackResourceCRD(t)
	host := requireHost(t)
	const settle = 30 * time.Second // hooks.Config.ChildSettle's default
	rel := newPagesRelease(t, "stackdome")
	// Without error pages the app has one Service, the one the quota
	// refuses (with them its <name>-error-pages Service is refused too).
	rel.install(t, "", "compositeController.resyncPeriodSeconds=2", "config.verdictRequeue=1s", "errorPages.enabled=false")
	k := suite.cluster.Kube
	ns := newNamespace(t)

	quotas := "/api/v1/namespaces/" + ns + "/resourcequotas"
	if _, err := k.Create(t.Context(), quotas, obj{"apiVersion": "v1", "kind": "ResourceQuota",
		"metadata": obj{"name": "no-services"}, "spec": obj{"hard": obj{"services": "0"}}}); err != nil {
		t.Fatalf("creating the quota: %v", err)
	}
	// The quota admission refuses by its status: wait for the quota
	// controller to have counted.
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if q, err := k.Get(t.Context(), quotas+"/no-services"); err == nil && framework.Dig(q, "status", "hard", "services") == "0" {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the quota controller did not count the namespace's Services within 30s")
		}
	}

	ip := framework.HostAddr(host, 25)
	if err := host.AddAddress(netip.MustParseAddr(ip)); err != nil {
		t.Fatal(err)
	}
	l, err := host.Listen(net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	loopback.Serve(t, l)
	first := time.Now()
	if _, err := k.Create(t.Context(), "/apis/stackdome.io/v1alpha1/namespaces/"+ns+"/stackresources", obj{
		"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource", "metadata": obj{"name": "shop"},
		"spec": obj{"type": "Service", "image": "example.invalid/shop:1", "replicas": 1, "host": "shop.e2e.test",
			"ports": []any{obj{"name": "http", "port": l.Addr().(*net.TCPAddr).Port, "public": true}}},
	}); err != nil {
		t.Fatalf("creating shop: %v", err)
	}

	ex := syncAnswer(t, ns, "shop", first, 90*time.Second, "a first sync", nil)
	if got := conditionReason(ex.Response, "Available"); got != "Progressing" {
		t.Errorf("first sync: Available reason %q, want Progressing (inside the settle time)", got)
	}
	// Metacontroller's own word for the refusal: its SyncError event.
	var refused string
	if err := framework.WaitUntil(60*time.Second, 250*time.Millisecond, "Metacontroller's SyncError event on shop naming the quota", func() (bool, error) {
		evs, err := suite.cluster.Kube.List(t.Context(), "/api/v1/namespaces/"+ns+"/events", "")
		if err != nil {
			return false, err
		}
		for _, e := range evs {
			msg, _ := framework.Dig(e, "message").(string)
			if framework.Dig(e, "involvedObject", "name") == "shop" && framework.Dig(e, "reason") == "SyncError" && strings.Contains(msg, "exceeded quota") {
				refused = msg
				return true, nil
			}
		}
		return false, fmt.Errorf("%d events", len(evs))
	}); err != nil {
		t.Fatal(err)
	}
	t.Logf("Metacontroller: %s", refused)
	suite.kubelet.RunPod(t, ns, waitPods(t, ns, "app.kubernetes.io/instance=shop", 1)[0], ip)

	ex = syncAnswer(t, ns, "shop", first, settle+90*time.Second, "a sync reading ChildNotCreated", func(resp obj) error {
		if got := conditionReason(resp, "Converged"); got != "ChildNotCreated" {
			return fmt.Errorf("Converged reason %q", got)
		}
		return nil
	})
	resp := ex.Response
	t.Logf("ChildNotCreated %s after the StackResource was created; status:\n%s", ex.At.Sub(first).Round(time.Second), mustJSON(resp["status"]))
	if ex.At.Sub(first) < settle-2*time.Second {
		t.Errorf("ChildNotCreated after %s, inside the %s settle time", ex.At.Sub(first).Round(time.Second), settle)
	}
	for typ, want := range map[string]string{"Available": "False", "Converged": "False", "Stalled": "True"} {
		if c := condition(resp, typ); c["status"] != want || c["reason"] != "ChildNotCreated" {
			t.Errorf("%s = %v %v, want %s ChildNotCreated", typ, c["status"], c["reason"], want)
		}
	}
	msg, _ := condition(resp, "Converged")["message"].(string)
	for _, part := range []string{"Service/shop was not created", "kubectl describe sr -n " + ns + " shop", "reason=SyncError"} {
		if !strings.Contains(msg, part) {
			t.Errorf("message %q does not say %q", msg, part)
		}
	}
	if _, err := k.Get(t.Context(), "/api/v1/namespaces/"+ns+"/services/shop"); !framework.IsCode(err, 404) {
		t.Errorf("the Service under a quota of zero Services: %v, want 404", err)
	}
	// The status Metacontroller wrote reads the same.
	if err := framework.WaitUntil(30*time.Second, 200*time.Millisecond, "the stored status reading ChildNotCreated", func() (bool, error) {
		live, err := k.Get(t.Context(), stackPath(ns, "shop"))
		if err != nil {
			return false, err
		}
		got := conditionReason(live, "Available")
		return got == "ChildNotCreated", fmt.Errorf("Available reason %q", got)
	}); err != nil {
		t.Error(err)
	}

	// The quota is lifted: Metacontroller's next sync creates the Service,
	// the one after sees it.
	if err := k.Do(t.Context(), "DELETE", quotas+"/no-services", "", nil, nil); err != nil {
		t.Fatalf("deleting the quota: %v", err)
	}
	lifted := time.Now()
	ex = syncAnswer(t, ns, "shop", lifted, 60*time.Second, "Serving once the quota is lifted", func(resp obj) error {
		if got := conditionReason(resp, "Converged"); got != "Serving" {
			return fmt.Errorf("Converged reason %q", got)
		}
		return nil
	})
	resp = ex.Response
	if c := condition(resp, "Available"); c["status"] != "True" || c["reason"] != "Serving" {
		t.Errorf("after the Service was created: Available %v %v, want True Serving", c["status"], c["reason"])
	}
	if s := framework.Dig(resp, "status", "childrenMissingSince"); s != nil {
		t.Errorf("childrenMissingSince %v kept once every child is observed", s)
	}
	if _, err := k.Get(t.Context(), "/api/v1/namespaces/"+ns+"/services/shop"); err != nil {
		t.Errorf("the Service: %v", err)
	}
}
