package syncbench

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackdome/stackdome/hooks"
	"github.com/stackdome/stackdome/metacontroller"
)

// TestPayloadIsAtSteadyState: each benchmark request is what a live server
// sees at steady state under its View — Sync, given that view of the
// verifier, answers with the very status the request carries — every pod
// current and ready: Verified serves and asks for nothing (no dial, no
// resync), Unverified verifies and asks for one dial. For makes resources
// that differ only in namespace, host and pod IPs, all on loopback.
func TestPayloadIsAtSteadyState(t *testing.T) {
	type summary struct {
		Reason   string
		Jobs     int
		Resync   float64
		Children int
		Pods     int
	}
	tests := map[View]summary{
		// Children: the Service, the Deployment, the error-page Service and its
		// EndpointSlice, the errors Middleware, the IngressRoute, and (3 pods)
		// the PodDisruptionBudget.
		Verified:   {Reason: "Serving", Jobs: 0, Resync: 0, Children: 7, Pods: 3},
		Unverified: {Reason: "VerifyingPorts", Jobs: 1, Resync: 10, Children: 7, Pods: 3},
	}
	for view, want := range tests {
		p, err := Build(fixture, 3, [3]int32{18080, 19090, 19901}, view)
		if err != nil {
			t.Fatal(err)
		}
		for _, body := range [][]byte{p.At("bench", "127.0.0."), p.For(9999)} {
			var req metacontroller.SyncRequest
			if err := json.Unmarshal(body, &req); err != nil {
				t.Fatal(err)
			}
			_, jobs, err := hooks.Sync(&req, nil, Now)
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != 1 || !strings.HasPrefix(jobs[0].IP, "127.") {
				t.Fatalf("view %d: a verifier that knows nothing is asked for %v, want one dial on loopback", view, jobs)
			}
			var verdicts hooks.Verdicts // Unverified: knows nothing
			if view == Verified {
				verdicts = allOpen{jobs[0].Job}
			}
			resp, jobs, reason := atFixpoint(t, fmt.Sprintf("view %d", view), &req, verdicts)
			got := summary{Jobs: len(jobs), Resync: resp.ResyncAfterSeconds, Children: len(resp.Children), Pods: len(req.Related["Pod.v1"]), Reason: reason}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("view %d (-want +got):\n%s", view, d)
			}
		}
	}
}

// TestFleetShapesAreTheirState: each fleet shape is at its fixpoint under
// its verifier's view, with the children its kind of app has, serving at
// steady state and progressing in a rollout (the half-done rollout must
// not read as a converged app, or BenchmarkFleet would time the wrong
// state).
func TestFleetShapesAreTheirState(t *testing.T) {
	want := map[string]struct {
		Reason         string
		Children, Pods int
		Jobs           int
	}{
		"private":         {Reason: "Serving", Children: 2, Pods: 1},
		"private-rollout": {Reason: "Progressing", Children: 2, Pods: 2},
		"public":          {Reason: "Serving", Children: 7, Pods: 2},
		"public-rollout":  {Reason: "Progressing", Children: 7, Pods: 3},
	}
	for _, f := range fleetShapes {
		p, err := BuildShape(fixture, f.shape, Verified)
		if err != nil {
			t.Fatal(err)
		}
		var req metacontroller.SyncRequest
		if err := json.Unmarshal(p.Body, &req); err != nil {
			t.Fatal(err)
		}
		resp, jobs, reason := atFixpoint(t, f.name, &req, p.verdicts)
		got := want[f.name]
		got.Reason, got.Children, got.Pods, got.Jobs = reason, len(resp.Children), len(req.Related["Pod.v1"]), len(jobs)
		if d := cmp.Diff(want[f.name], got); d != "" {
			t.Errorf("%s (-want +got):\n%s", f.name, d)
		}
	}
}

// atFixpoint syncs req with verdicts, fails the test unless the answer's
// status is the request's, and returns the answer, its dial jobs and the
// reason of its Available condition.
func atFixpoint(t *testing.T, what string, req *metacontroller.SyncRequest, verdicts hooks.Verdicts) (*metacontroller.SyncResponse, []hooks.DialJob, string) {
	t.Helper()
	resp, jobs, err := hooks.Sync(req, verdicts, Now)
	if err != nil {
		t.Fatal(err)
	}
	var parent struct{ Status json.RawMessage }
	if err := json.Unmarshal(req.Parent, &parent); err != nil {
		t.Fatal(err)
	}
	if d := StatusDiff(parent.Status, resp.Status); d != "" {
		t.Errorf("%s: the request is not at its fixpoint (-request +answer):\n%s", what, d)
	}
	var st struct {
		Conditions []struct{ Type, Reason string }
	}
	if err := roundTrip(resp.Status, &st); err != nil {
		t.Fatal(err)
	}
	for _, c := range st.Conditions {
		if c.Type == "Available" {
			return resp, jobs, c.Reason
		}
	}
	return resp, jobs, ""
}
