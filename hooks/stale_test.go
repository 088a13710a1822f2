package hooks

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/portcheck"
	"github.com/stackdome/stackdome/schema"
)

// TestStaleParentNeverUndoesACondemnation: Metacontroller sends a sync with
// the parent its informer holds, which may predate a status another sync
// has just written, and writes the answer over the status it reads afresh
// (metacontroller/metacontroller@v4.17.2 pkg/controller/composite/
// controller.go, updateParentStatus). Two replicas answer in turn, each
// with verdicts of its own. Once one has condemned a port from a dial made
// past the grace, whatever the other answers from the parent of before —
// the grace window still open — must be either that same condemnation,
// byte for byte, or no answer at all (held, 429), never the open window
// again: Available would turn True over a proven-dead port, and the two
// would write their statuses over each other.
func TestStaleParentNeverUndoesACondemnation(t *testing.T) {
	sync := staleGate(t)
	at := func(d time.Duration) time.Time { return testNow.Add(d) }
	closedAt := func(d time.Duration) Verdicts {
		return anyKey{portcheck.Result{IP: "127.0.0.1", CheckedAt: at(d), Ports: []portcheck.PortResult{
			{Name: "http", Port: 8080, State: portcheck.Open},
			{Name: "metrics", Port: 9090, State: portcheck.Closed, Err: "connect: connection refused"}}}}
	}

	// Replica a opens the window at 10s; the status Metacontroller caches.
	window, _, err := sync(map[string]any{}, closedAt(time.Second), at(10*time.Second))
	require.NoError(t, err)
	require.Equal(t, string(schema.ReasonPortCheckFailing), find(window.Conditions, schema.CondAvailable).Reason)
	stale := roundTrip(t, window)

	// Replica a condemns from a dial made past 10s + 3m.
	condemned, jobs, err := sync(stale, closedAt(3*time.Minute+15*time.Second), at(3*time.Minute+20*time.Second))
	require.NoError(t, err)
	require.Equal(t, "True", string(find(condemned.Conditions, schema.CondStalled).Status))
	require.Empty(t, jobs, "a condemnation dials no more")

	for name, tc := range map[string]struct {
		verdicts Verdicts
		now      time.Duration
	}{
		"replica b condemns from a dial of its own, later":   {closedAt(3*time.Minute + 25*time.Second), 3*time.Minute + 30*time.Second},
		"replica b condemns from a dial of its own, earlier": {closedAt(3*time.Minute + 11*time.Second), 3*time.Minute + 30*time.Second},
		"replica a, the same dial, a second later":           {closedAt(3*time.Minute + 15*time.Second), 3*time.Minute + 21*time.Second},
		"replica b's refusal was dialed inside the window":   {closedAt(2*time.Minute + 55*time.Second), 3*time.Minute + 30*time.Second},
		"replica b knows nothing (restarted)":                {nil, 3*time.Minute + 30*time.Second},
		"replica b's refusal is an hour old":                 {closedAt(2*time.Minute + 55*time.Second), time.Hour},
	} {
		t.Run(name, func(t *testing.T) {
			got, jobs, err := sync(stale, tc.verdicts, at(tc.now))
			var held *HeldError
			if errors.As(err, &held) {
				require.Len(t, jobs, 1, "a held answer dials the pod")
				require.Contains(t, held.Error(), "2026-11-29T12:03:10Z", "the hold names the end of the grace")
				return
			}
			require.NoError(t, err)
			if diff := cmp.Diff(condemned, got); diff != "" {
				t.Errorf("answered from the parent of before, not the condemnation (-a +b):\n%s", diff)
			}
		})
	}

	// From the condemnation itself, every replica answers it unchanged.
	for name, v := range map[string]Verdicts{"none": nil, "closed": closedAt(3*time.Minute + 25*time.Second), "open later": anyKey{portcheck.Result{
		IP: "127.0.0.1", CheckedAt: at(4 * time.Minute), Ports: []portcheck.PortResult{{Name: "http", Port: 8080, State: portcheck.Open}, {Name: "metrics", Port: 9090, State: portcheck.Open}}}}} {
		got, _, err := sync(roundTrip(t, condemned), v, at(5*time.Minute))
		require.NoError(t, err, name)
		require.Empty(t, cmp.Diff(condemned, got), name)
	}
}

// staleGate is the stale-parent tests' app: two declared ports, the
// default grace and requeue, answered by gateSync.
func staleGate(t *testing.T) func(status map[string]any, v Verdicts, now time.Time) (schema.Status, []DialJob, error) {
	cfg := Config{PortCheckGrace: 3 * time.Minute, VerdictRequeue: 10 * time.Second}
	spec := map[string]any{"type": "Service", "image": "ghcr.io/acme/app:1", "ports": []any{
		map[string]any{"name": "http", "port": 8080}, map[string]any{"name": "metrics", "port": 9090}}}
	return gateSync(t, cfg, spec)
}

// gateSync answers gateRequest's sync of spec with the given status, at a
// replica holding v, at now: the status, or the error (HeldError), and the
// dials either way.
func gateSync(t *testing.T, cfg Config, spec map[string]any) func(status map[string]any, v Verdicts, now time.Time) (schema.Status, []DialJob, error) {
	return func(status map[string]any, v Verdicts, now time.Time) (schema.Status, []DialJob, error) {
		t.Helper()
		var req metacontroller.SyncRequest
		require.NoError(t, json.Unmarshal(gateRequest(t, cfg, spec, status, now), &req))
		resp, jobs, err := cfg.Sync(&req, v, now)
		if err != nil {
			return schema.Status{}, jobs, err
		}
		return resp.Status.(schema.Status), jobs, nil
	}
}

// anyKey is a verifier holding one result, for whatever key is asked.
type anyKey struct{ res portcheck.Result }

func (v anyKey) Get(portcheck.Key) (portcheck.Result, bool) { return v.res, true }
func (anyKey) Pending(portcheck.Key) bool                   { return false }

// TestStaleParentNeverUndoesServing: the same hole at the other end of the
// gate. Replica a's dial answered every port open, and it answers Serving
// from a parent whose status holds no verdict; Metacontroller writes it,
// and the next sync, queued while a's ran, reads the parent its informer
// still holds: the one of before. Replica b, which knows nothing of the pod
// (it never answered a sync of this app, or restarted), must answer that
// Serving byte for byte, or nothing (held, 429, the pod dialed), never
// VerifyingPorts: Converged would turn False again under a status that
// served, and the next sync would write Serving back — two writes, and a
// flap of Converged, for nothing. Past VerdictRequeue after the last pod
// turned ready the dial had its time, and a replica that still has no
// verdict says so (VerifyingPorts) rather than hold the sync for ever.
func TestStaleParentNeverUndoesServing(t *testing.T) {
	sync := staleGate(t)
	at := func(d time.Duration) time.Time { return testNow.Add(d) }
	// The pod of gateRequest turned ready at testNow; replica a's dial
	// answered 300ms later.
	open := anyKey{portcheck.Result{IP: "127.0.0.1", CheckedAt: at(300 * time.Millisecond), Ports: []portcheck.PortResult{
		{Name: "http", Port: 8080, State: portcheck.Open}, {Name: "metrics", Port: 9090, State: portcheck.Open}}}}
	stale := map[string]any{} // no verdict: the status of before
	serving, _, err := sync(stale, open, at(400*time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, string(schema.ReasonServing), find(serving.Conditions, schema.CondAvailable).Reason)

	for name, tc := range map[string]struct {
		verdicts Verdicts
		now      time.Duration
		dials    int
	}{
		"replica b knows nothing":                 {nil, 450 * time.Millisecond, 1},
		"replica b's dial is in flight":           {pending{}, 1450 * time.Millisecond, 0},
		"replica b knows nothing, 9s after ready": {nil, 9 * time.Second, 1},
		"the node's clock is 5s ahead of ours":    {nil, -5 * time.Second, 1},
	} {
		t.Run(name, func(t *testing.T) {
			got, jobs, err := sync(stale, tc.verdicts, at(tc.now))
			var held *HeldError
			if errors.As(err, &held) {
				require.Len(t, jobs, tc.dials, "a held answer dials the pod unless a dial is in flight")
				require.Contains(t, held.Error(), "decides the status")
				return
			}
			require.NoError(t, err)
			if diff := cmp.Diff(serving, got); diff != "" {
				t.Errorf("answered from the parent of before, not Serving (-a +b):\n%s", diff)
			}
		})
	}

	// Past VerdictRequeue (either side of the pod's readiness time, the
	// node's clock) the answer is not held: the dial has had its time.
	for _, d := range []time.Duration{11 * time.Second, time.Hour, -11 * time.Second} {
		got, jobs, err := sync(stale, nil, at(d))
		require.NoError(t, err, "at %s", d)
		require.Equal(t, string(schema.ReasonVerifyingPorts), find(got.Conditions, schema.CondAvailable).Reason, "at %s", d)
		require.Len(t, jobs, 1, "at %s", d)
	}
}

// pending is a verifier dialing every key, with nothing stored yet.
type pending struct{}

func (pending) Get(portcheck.Key) (portcheck.Result, bool) { return portcheck.Result{}, false }
func (pending) Pending(portcheck.Key) bool                 { return true }
