package status

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/portcheck"
	"github.com/stackdome/stackdome/schema"
)

// The serving rows: every replica is ready, and the verifier is asked
// whether every declared port really listens. Each applies while the app
// serves (table.go) and reads the gate's view of the verdicts (readGate).

// servingNoPorts is the row "serving, all ports open" when none are
// declared: nothing to dial.
func servingNoPorts(f *facts) (row, bool) {
	if len(f.spec.Ports) > 0 {
		return row{}, false
	}
	return row{health: health{available: true, converged: true, reason: schema.ReasonServing,
		message: "all replicas are ready; no ports are declared"}}, true
}

// condemnedKept is the row "serving, a port closed past grace" once the
// status says so: terminal for this workload revision, no more dials, no
// requeue, whatever this replica's verifier holds.
func condemnedKept(f *facts) (row, bool) {
	if !f.prev.condemned {
		return row{}, false
	}
	details := f.prev.of(schema.ReadinessFailure, f.workloadRev)
	return row{
		health:       health{stalled: true, reason: schema.ReasonPortNotListening, message: f.condemnation(details, f.prev.failingSince)},
		details:      details,
		ports:        f.prev.ports,
		failingSince: f.prev.failingSince,
	}, true
}

// waitingForReadyPod is the row "serving, verdict not yet known" before a
// ready pod of the revision reached the hook: counted ready by the workload,
// so the pod event is on its way.
func waitingForReadyPod(f *facts) row {
	return row{
		health:       health{available: true, reason: schema.ReasonVerifyingPorts, message: "all replicas are ready; waiting for a ready pod of revision " + f.workloadRev},
		ports:        f.prev.ports,
		failingSince: f.prev.failingSince,
	}
}

// verifying is the row "serving, verdict not yet known": neither this
// replica nor the status has a verdict; the pod is dialed. Before a ready
// pod reached the hook, it waits for one (waitingForReadyPod).
//
// Within Config.VerdictRequeue of the moment the app began serving (the
// last of its pods turned ready, justServing) the answer is held until the
// dial lands: the status the request carries may be a copy Metacontroller
// cached before another replica's Serving was written, and VerifyingPorts
// answered over it would be written, Converged turning False under an app
// that serves, and Serving written back by the next sync. A dial answers
// within seconds (open, refused, or inconclusive at its timeout), so the
// hold is one or two syncs; past the bound, a replica still without a
// verdict (its verifier's queue full) says VerifyingPorts rather than hold
// the sync for ever.
func verifying(f *facts) (row, bool) {
	g := f.readGate()
	switch {
	case g.known:
		return row{}, false
	case g.rep == nil:
		return waitingForReadyPod(f), true
	}
	rep := g.rep
	r := row{ports: f.prev.ports, failingSince: f.prev.failingSince}
	r.jobs, r.requeue = f.dialsFor(rep, nil, dialAgain)
	switch since := f.prev.failingSince; {
	case since != nil:
		r.health = health{available: true, reason: schema.ReasonPortCheckFailing, message: f.windowMessage(since, "a declared port refused connections")}
	case f.justServing():
		r.held = fmt.Sprintf("%s/%s: every replica is ready and no verdict is known; the dial of %s on pod %s decides the status",
			f.namespace, f.name, portList(f.spec.Ports), rep.Metadata.Name)
	default:
		r.health = health{available: true, reason: schema.ReasonVerifyingPorts, message: fmt.Sprintf("all replicas are ready; verifying %s on pod %s", portList(f.spec.Ports), rep.Metadata.Name)}
	}
	return r, true
}

// justServing reports whether the last of the workload revision's ready
// pods turned ready within Config.VerdictRequeue of now, either side: the
// times are the node's clock, so one ahead of this replica's still bounds
// the hold it allows (verifying) to twice the bound.
func (f *facts) justServing() bool {
	var last time.Time
	for _, p := range f.pods {
		if ready, t := p.Ready(); ready && t.After(last) {
			last = t.Time
		}
	}
	if last.IsZero() {
		return false
	}
	d := f.now.Sub(last)
	return d < f.cfg.VerdictRequeue && d > -f.cfg.VerdictRequeue
}

// condemned is the row "serving, a port closed past grace": refused by a
// dial made after failingSince + grace, so believed. Terminal for this
// workload revision: no more dials.
//
// It is stamped with the end of the grace window, not with its dial's
// time: the port refused every dial from failingSince through one made
// after the window, and each replica condemns from a dial of its own, made
// at its own moment. Metacontroller writes every answer over the status
// it reads afresh, so a replica answering from a parent cached before
// another's condemnation was written (metacontroller/metacontroller@v4.17.2
// pkg/controller/composite/controller.go, updateParentStatus) must answer
// the same bytes, or the two would each write theirs. The verdict's
// checkedAt is the window's end likewise: no dial before it could condemn.
func condemned(f *facts) (row, bool) {
	g, since, end, ok := f.refusal()
	if !ok || g.ev.res.CheckedAt.Before(end.Time) || dialedBeforeReadiness(g.ev.res, g.rep, f.now.Time) {
		return row{}, false
	}
	rep, ev := g.rep, g.ev
	ev.res.CheckedAt = end.Time
	details := portFailures(ev.res.ClosedPorts(), rep.Metadata.Name, f.workloadRev)
	return row{
		health:       health{stalled: true, reason: schema.ReasonPortNotListening, message: f.condemnation(details, since)},
		details:      details,
		ports:        portsOf(ev.res),
		failingSince: since,
		evidence:     &ev,
		at:           &end,
	}, true
}

// deciding is the moment between the end of the grace window and the dial
// that decides it: the refusal at hand was dialed inside the window, so it
// cannot condemn, and the window is over, so it must not be answered as
// open either. Another replica may have condemned already from a dial of
// its own, and this sync's parent may be a copy Metacontroller cached
// before that status was written: the window-open answer it would give
// would be written over the condemnation (Metacontroller replaces the
// status it reads afresh with every answer that differs), Available turning
// True again. So the answer is held (Outcome.Hold) and the pod dialed; the
// sync after the dial condemns, or clears the window if the port answers.
func deciding(f *facts) (row, bool) {
	g, _, end, ok := f.refusal()
	if !ok || f.now.Before(&end) {
		return row{}, false
	}
	rep, ev := g.rep, g.ev
	r := row{held: fmt.Sprintf("%s/%s: the port check's grace ended at %s; a dial made after it decides the status",
		f.namespace, f.name, end.UTC().Format(time.RFC3339))}
	r.jobs, _ = f.dialsFor(rep, &ev, forgetAndDial)
	return r, true
}

// windowOpen is the row "serving, a port closed, inside grace": the refusal
// is not believed yet — the app may still be binding — so the verdict is
// dropped and the pod dialed again.
func windowOpen(f *facts) (row, bool) {
	g, since, _, ok := f.refusal()
	if !ok {
		return row{}, false
	}
	rep, ev := g.rep, g.ev
	r := row{
		health:       health{available: true, reason: schema.ReasonPortCheckFailing, message: f.windowMessage(since, ev.res.Message())},
		ports:        portsOf(ev.res),
		failingSince: since,
		evidence:     &ev,
	}
	r.jobs, r.requeue = f.dialsFor(rep, &ev, forgetAndDial)
	return r, true
}

// servingOpen is the row "serving, all ports open": the window is cleared; a
// stale verdict still counts while it is dialed again.
func servingOpen(f *facts) (row, bool) {
	g := f.readGate()
	if !g.known || !g.ev.res.AllOpen() {
		return row{}, false
	}
	rep, ev := g.rep, g.ev
	r := row{
		health:   health{available: true, converged: true, reason: schema.ReasonServing, message: fmt.Sprintf("%s serves: %s open", f.name, portList(f.spec.Ports))},
		ports:    portsOf(ev.res),
		evidence: &ev,
	}
	want := noRedial
	if ev.res.Stale {
		want = dialAgain
	}
	r.jobs, r.requeue = f.dialsFor(rep, &ev, want)
	return r, true
}

// unverified is the row of a serving app whose dials were inconclusive:
// never condemned, dialed again.
func unverified(f *facts) (row, bool) {
	g := f.readGate()
	if !g.known {
		return row{}, false
	}
	rep, ev := g.rep, g.ev
	r := row{
		health:       health{available: true, reason: schema.ReasonPortsUnverified, message: ev.res.Message()},
		ports:        portsOf(ev.res),
		failingSince: f.prev.failingSince,
		evidence:     &ev,
	}
	r.jobs, r.requeue = f.dialsFor(rep, &ev, dialAgain)
	return r, true
}

// refusal is the serving rows' reading of a verdict proving a port closed:
// the gate's view, the grace window's start (the status's, else now: this
// refusal opens it) and its end; false when no verdict proves a port closed.
func (f *facts) refusal() (g gateView, since *metav1.Time, end metav1.Time, ok bool) {
	g = f.readGate()
	if !g.closed {
		return g, nil, metav1.Time{}, false
	}
	since = f.prev.failingSince
	if since == nil {
		since = &f.now
	}
	return g, since, f.graceEnd(since), true
}

// graceEnd is when the grace window opened at since ends: a refusal dialed
// from then on is believed.
func (f *facts) graceEnd(since *metav1.Time) metav1.Time {
	return metav1.NewTime(since.Add(f.cfg.PortCheckGrace))
}

// windowMessage says why the window is open and until when.
func (f *facts) windowMessage(since *metav1.Time, cause string) string {
	deadline := f.graceEnd(since).UTC().Format(time.RFC3339)
	return fmt.Sprintf("%s; failing since %s, verifying again until %s", cause, since.UTC().Format(time.RFC3339), deadline)
}

// condemnation names every refused port of details, since when, and what
// the user does about it: the same pods stay condemned; new pods — a rollout
// restart, a new spec — are verified from scratch.
func (f *facts) condemnation(details []schema.FailureDetail, since *metav1.Time) string {
	var names []string
	for _, d := range details {
		if d.Port != 0 {
			names = append(names, d.Message)
		}
	}
	kind := strings.ToLower(f.spec.WorkloadKind())
	from := "an unknown time"
	if since != nil {
		from = since.UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("%s since %s (past the %s grace). Fix the app or its declared ports, then run kubectl rollout restart %s/%s -n %s: new pods are verified from scratch",
		strings.Join(names, "; "), from, f.cfg.PortCheckGrace, kind, f.name, f.namespace)
}

// portFailures is one readiness_failure detail per refused port.
func portFailures(closed []portcheck.PortResult, podName, workloadRev string) []schema.FailureDetail {
	out := make([]schema.FailureDetail, 0, len(closed))
	for _, p := range closed {
		out = append(out, schema.FailureDetail{
			Type: schema.ReadinessFailure, Reason: string(schema.ReasonPortNotListening), Container: schema.ContainerName, Port: p.Port, Revision: workloadRev,
			Message: fmt.Sprintf("port %d (%s) refused connection on pod %s: nothing listens there", p.Port, p.Name, podName),
		})
	}
	return out
}

// portList renders "port 80 (http)" or "ports 80 (http), 9090 (metrics)".
func portList(ps []schema.Port) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%d (%s)", p.Port, p.Name)
	}
	if len(parts) == 1 {
		return "port " + parts[0]
	}
	return "ports " + strings.Join(parts, ", ")
}
