package syncbench

import (
	"encoding/json"
	"fmt"

	"github.com/google/go-cmp/cmp"

	"github.com/stackdome/stackdome/hooks"
	"github.com/stackdome/stackdome/internal/mcrequest"
	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/portcheck"
)

// How a payload reaches its status fixpoint: the fixture's request synced
// through hooks.Sync under one view of the verifier until the answer's
// status is the request's.

// desiredOf syncs req, the fixture's request with its spec changed, as a
// new resource (no status, no verdict): its desired children, the status
// computed, and the revision of its pods.
func desiredOf(req map[string]any) (desired []map[string]any, status any, rev string, err error) {
	resp, _, err := syncMap(req, nil)
	if err != nil {
		return nil, nil, "", err
	}
	return answerOf(resp)
}

// answerOf is a sync answer's children, its status and its revision.
func answerOf(resp *metacontroller.SyncResponse) (desired []map[string]any, status any, rev string, err error) {
	if err := roundTrip(resp.Children, &desired); err != nil {
		return nil, nil, "", err
	}
	var st struct{ Revision string }
	if err := roundTrip(resp.Status, &st); err != nil {
		return nil, nil, "", err
	}
	return desired, resp.Status, st.Revision, nil
}

// viewOf is the verifier of view for the request build makes: for
// Verified, one holding an Open verdict on the pod Sync asks to dial.
func viewOf(build *mcrequest.Sync, view View) (hooks.Verdicts, error) {
	if view != Verified {
		return nil, nil
	}
	_, jobs, err := hooks.Sync(build.Request(), nil, Now)
	if err != nil {
		return nil, err
	}
	if len(jobs) != 1 {
		return nil, fmt.Errorf("the unverified request asks for %d dials, want 1", len(jobs))
	}
	return allOpen{jobs[0].Job}, nil
}

// fixpoint feeds status back as the parent's until it no longer changes: the
// request a live server with that view sees at steady state. It leaves the
// settled status in build's parent and returns it.
func fixpoint(build *mcrequest.Sync, status any, verdicts hooks.Verdicts) (any, error) {
	for range 5 {
		build.Parent["status"] = status
		resp, _, err := hooks.Sync(build.Request(), verdicts, Now)
		if err != nil {
			return nil, err
		}
		if StatusDiff(status, resp.Status) == "" {
			return status, nil
		}
		status = resp.Status
	}
	return nil, fmt.Errorf("the status does not settle in 5 syncs: %s", StatusDiff(build.Parent["status"], status))
}

func syncMap(req map[string]any, verdicts hooks.Verdicts) (*metacontroller.SyncResponse, []hooks.DialJob, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, nil, err
	}
	var r metacontroller.SyncRequest
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, nil, err
	}
	return hooks.Sync(&r, verdicts, Now)
}

// allOpen is a verifier holding, for job's key, a verdict of Now on job's
// IP with every port Open.
type allOpen struct{ job portcheck.Job }

func (v allOpen) Get(k portcheck.Key) (portcheck.Result, bool) {
	if k != v.job.Key {
		return portcheck.Result{}, false
	}
	res := portcheck.Result{IP: v.job.IP, CheckedAt: Now}
	for _, p := range v.job.Ports {
		res.Ports = append(res.Ports, portcheck.PortResult{Name: p.Name, Port: p.Port, State: portcheck.Open})
	}
	return res, true
}

func (allOpen) Pending(portcheck.Key) bool { return false }

// StatusDiff compares two statuses as JSON values (a struct, a map or raw
// JSON bytes): "" when equal, else a cmp.Diff (-a +b).
func StatusDiff(a, b any) string {
	var va, vb any
	for _, x := range []struct {
		in  any
		out *any
	}{{a, &va}, {b, &vb}} {
		raw, ok := x.in.(json.RawMessage)
		if !ok {
			var err error
			if raw, err = json.Marshal(x.in); err != nil {
				return err.Error()
			}
		}
		if err := json.Unmarshal(raw, x.out); err != nil {
			return err.Error()
		}
	}
	return cmp.Diff(va, vb)
}

func roundTrip(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

func firstValue(m any) map[string]any {
	for _, v := range m.(map[string]any) {
		return v.(map[string]any)
	}
	return nil
}
