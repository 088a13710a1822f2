package syncbench

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stackdome/stackdome/hooks"
	"github.com/stackdome/stackdome/metacontroller"
)

// TestPayloadIsAtSteadyState: the benchmark requests are what a live
// server sees once a resource serves — its status is Sync's answer fed
// back, every pod current and ready, one dial wanted (the verifier knows
// nothing yet) — and For makes resources that differ only in namespace and
// pod IPs, all on loopback.
func TestPayloadIsAtSteadyState(t *testing.T) {
	p, err := Build(fixture, 3, [3]int32{18080, 19090, 19901})
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range [][]byte{p.At("bench", "127.0.0."), p.For(9999)} {
		var req metacontroller.SyncRequest
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		resp, jobs, err := hooks.Sync(&req, nil, Now)
		if err != nil {
			t.Fatal(err)
		}
		var parent struct{ Status json.RawMessage }
		if err := json.Unmarshal(req.Parent, &parent); err != nil {
			t.Fatal(err)
		}
		got, _ := json.Marshal(resp.Status)
		var a, b any
		json.Unmarshal(got, &a)
		json.Unmarshal(parent.Status, &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("status is not at its fixpoint:\nsent %s\ngot  %s", parent.Status, got)
		}
		if !strings.Contains(string(got), `"reason":"VerifyingPorts"`) || len(jobs) != 1 || len(resp.Children) != 6 {
			t.Errorf("not serving with one dial and 6 children (Service, Deployment, the error-page Service, EndpointSlice, Middleware, IngressRoute): %d jobs, %d children, %s", len(jobs), len(resp.Children), got)
		}
		if len(req.Related["Pod.v1"]) != 3 || !strings.HasPrefix(jobs[0].IP, "127.") {
			t.Errorf("%d pods, dial to %s", len(req.Related["Pod.v1"]), jobs[0].IP)
		}
	}
}
