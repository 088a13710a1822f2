//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRefusedServiceReadsNotCreated is #25's "a child the API server
// refuses is invisible in status", against the real API server: in a
// namespace whose ResourceQuota allows no Service, the app's Service is
// refused at every sync, so the next request really comes back without it.
// Inside stackdome's 30s settle time the app reads as before; past it, not
// Available and not Converged, Stalled ChildNotCreated naming Service/shop
// and where Metacontroller's events are. Once the quota is lifted the
// Service is created and the status converges (Available Serving).
//
// Under the real Metacontroller (the lead's port) syncRefusingChildren goes:
// Metacontroller itself applies the other children, posts its SyncError
// event and writes the status; the assertions stay.
func TestRefusedServiceReadsNotCreated(t *testing.T) {
	requireStackResourceCRD(t)
	const settle = 30 * time.Second // hooks.Config.ChildSettle's default
	seen := &lastSyncAnswer{hook: startStackdome(t, "--verdict-requeue", "1s", "--dial-allow", "127.0.0.0/8", "--dial-allow-loopback")}
	mc := &metacontroller{kube: suite.cluster.kube, hook: seen}
	k := suite.cluster.kube
	ns := newNamespace(t)

	quotas := "/api/v1/namespaces/" + ns + "/resourcequotas"
	if _, err := k.create(t.Context(), quotas, obj{"apiVersion": "v1", "kind": "ResourceQuota",
		"metadata": obj{"name": "no-services"}, "spec": obj{"hard": obj{"services": "0"}}}); err != nil {
		t.Fatalf("creating the quota: %v", err)
	}
	// The quota admission refuses by its status: wait for the quota
	// controller to have counted.
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if q, err := k.get(t.Context(), quotas+"/no-services"); err == nil && dig(q, "status", "hard", "services") == "0" {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the quota controller did not count the namespace's Services within 30s")
		}
	}

	l, err := net.Listen("tcp", "127.0.0.25:0")
	if err != nil {
		t.Fatal(err)
	}
	serve(t, l)
	if _, err := k.create(t.Context(), "/apis/stackdome.io/v1alpha1/namespaces/"+ns+"/stackresources", obj{
		"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource", "metadata": obj{"name": "shop"},
		"spec": obj{"type": "Service", "image": "example.invalid/shop:1", "replicas": 1, "host": "shop.e2e.test",
			"ports": []any{obj{"name": "http", "port": l.Addr().(*net.TCPAddr).Port, "public": true}}},
	}); err != nil {
		t.Fatalf("creating shop: %v", err)
	}

	first := time.Now()
	resp, refused := syncRefusingChildren(t, mc, seen, ns, "shop")
	if refused == nil || !strings.Contains(refused.Error(), "exceeded quota") {
		t.Fatalf("first sync: want the Service refused by the quota, got %v", refused)
	}
	t.Logf("the API server refuses: %v", refused)
	if got := conditionReason(resp, "Available"); got != "Progressing" {
		t.Errorf("first sync: Available reason %q, want Progressing (inside the settle time)", got)
	}
	markPodReady(t, ns, waitPods(t, ns, "app.kubernetes.io/instance=shop", 1)[0], "127.0.0.25")

	// Sync as Metacontroller retries until the settle time is over.
	for {
		resp, refused = syncRefusingChildren(t, mc, seen, ns, "shop")
		if refused == nil {
			t.Fatal("the Service was created under a quota of zero Services")
		}
		if got := conditionReason(resp, "Converged"); got == "ChildNotCreated" {
			break
		}
		if since := time.Since(first); since > settle+30*time.Second {
			t.Fatalf("%s after the first sync, still no ChildNotCreated: %s", since.Round(time.Second), mustJSON(resp["status"]))
		}
		time.Sleep(time.Second)
	}
	t.Logf("ChildNotCreated %s after the first sync; status:\n%s", time.Since(first).Round(time.Second), mustJSON(resp["status"]))
	if time.Since(first) < settle-2*time.Second {
		t.Errorf("ChildNotCreated after %s, inside the %s settle time", time.Since(first).Round(time.Second), settle)
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
	// The status Metacontroller wrote reads the same.
	live, err := k.get(t.Context(), "/apis/stackdome.io/v1alpha1/namespaces/"+ns+"/stackresources/shop")
	if err != nil {
		t.Fatal(err)
	}
	if got := conditionReason(live, "Available"); got != "ChildNotCreated" {
		t.Errorf("the stored status reads Available reason %q, want ChildNotCreated", got)
	}

	// The quota is lifted: the next retry creates the Service, the one
	// after sees it.
	if err := k.do(t.Context(), "DELETE", quotas+"/no-services", "", nil, nil); err != nil {
		t.Fatalf("deleting the quota: %v", err)
	}
	lifted := time.Now()
	for {
		resp, refused = syncRefusingChildren(t, mc, seen, ns, "shop")
		if refused == nil && conditionReason(resp, "Converged") == "Serving" {
			break
		}
		if time.Since(lifted) > 30*time.Second {
			t.Fatalf("30s after the quota was lifted: %v; status: %s", refused, mustJSON(resp["status"]))
		}
		time.Sleep(time.Second)
	}
	if c := condition(resp, "Available"); c["status"] != "True" || c["reason"] != "Serving" {
		t.Errorf("after the Service was created: Available %v %v, want True Serving", c["status"], c["reason"])
	}
	if s := dig(resp, "status", "childrenMissingSince"); s != nil {
		t.Errorf("childrenMissingSince %v kept once every child is observed", s)
	}
	if _, err := k.get(t.Context(), "/api/v1/namespaces/"+ns+"/services/shop"); err != nil {
		t.Errorf("the Service: %v", err)
	}
}

// syncRefusingChildren is one sync of ns/name by the emulation, ended as
// Metacontroller v4.17.2 ends a sync whose children the API server refuses
// (metacontroller/metacontroller@v4.17.2 pkg/controller/composite/controller.go,
// syncParentObject: updateParentStatus runs after manageChildren whatever it
// returned): the hook's status is written
// anyway, and the refusal is returned (Metacontroller's SyncError event).
// The emulation stops at the first refused apply before writing status,
// so this writes it. resp is the hook's answer; the request the hook was
// sent must not observe a Service the API server refused.
func syncRefusingChildren(t *testing.T, mc *metacontroller, seen *lastSyncAnswer, ns, name string) (resp obj, refused error) {
	t.Helper()
	res, err := mc.sync(t.Context(), ns, name)
	if err == nil {
		for _, c := range res.notAsSent {
			t.Errorf("child not stored as sent: %s", c)
		}
		return res.response, nil
	}
	if !strings.Contains(err.Error(), "applying ") {
		t.Fatalf("sync: %v", err)
	}
	if err := json.Unmarshal(seen.get(), &resp); err != nil {
		t.Fatalf("the hook's answer: %v", err)
	}
	path := "/apis/stackdome.io/v1alpha1/namespaces/" + ns + "/stackresources/" + name
	live, gerr := suite.cluster.kube.get(t.Context(), path)
	if gerr != nil {
		t.Fatal(gerr)
	}
	status := deepCopy(resp["status"]).(map[string]any)
	status["observedGeneration"] = dig(live, "metadata", "generation")
	live["status"] = status
	if _, perr := suite.cluster.kube.put(t.Context(), path+"/status", live); perr != nil && !isCode(perr, 409) {
		t.Fatalf("writing status: %v", perr)
	}
	return resp, err
}

// lastSyncAnswer is the hook, keeping its last /sync answer.
type lastSyncAnswer struct {
	hook hookServer
	mu   sync.Mutex
	last json.RawMessage
}

func (a *lastSyncAnswer) post(ctx context.Context, path string, body, out any) error {
	if path != "/sync" {
		return a.hook.post(ctx, path, body, out)
	}
	var raw json.RawMessage
	if err := a.hook.post(ctx, path, body, &raw); err != nil {
		return err
	}
	a.mu.Lock()
	a.last = raw
	a.mu.Unlock()
	return json.Unmarshal(raw, out)
}

func (a *lastSyncAnswer) get() json.RawMessage {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}
