package hooks

import (
	"fmt"
	"strings"
	"time"

	"github.com/stackdome/stackdome/portcheck"
	"github.com/stackdome/stackdome/schema"
)

// servingGate is the serving rows: every replica is ready, and the verifier
// is asked whether every declared port really listens.
func (f *facts) servingGate() row {
	if len(f.spec.Ports) == 0 {
		return servingNoPorts()
	}
	if f.prev.condemned {
		return condemnedKept(f)
	}
	rep := representative(f.pods, true)
	if rep == nil {
		return waitingForReadyPod(f)
	}
	res, ok := f.result(rep)
	switch {
	case !ok:
		return verifying(f, rep)
	case len(res.ClosedPorts()) > 0:
		pc := f.prev.portCheck
		if pc == nil {
			pc = &schema.PortCheck{Revision: f.rev, FailingSince: f.now}
		}
		if !res.CheckedAt.Before(pc.FailingSince.Add(f.cfg.PortCheckGrace)) {
			return condemned(f, rep, res, pc)
		}
		return windowOpen(f, rep, res, pc)
	case res.AllOpen():
		return servingOpen(f, rep, res)
	}
	return unverified(f, rep, res)
}

// servingNoPorts is the row "serving, all ports open" when none are
// declared: nothing to dial.
func servingNoPorts() row {
	return row{verdict: verdict{available: true, converged: true, reason: ReasonServing, message: "all replicas are ready; no ports are declared"}}
}

// condemnedKept is the row "serving, a port closed past grace" once the
// status says so: terminal for this revision, no more dials, no requeue.
func condemnedKept(f *facts) row {
	details := f.prev.of(schema.ReadinessFailure)
	return row{
		verdict:   verdict{stalled: true, reason: ReasonPortNotListening, message: condemnation(details, f.prev.portCheck, f.cfg.PortCheckGrace)},
		details:   details,
		ports:     f.prev.ports,
		portCheck: f.prev.portCheck,
	}
}

// waitingForReadyPod is the row "serving, verdict not yet known" before a
// ready pod of the revision reached the hook: counted ready by the workload,
// so the pod event is on its way.
func waitingForReadyPod(f *facts) row {
	return row{
		verdict:   verdict{available: true, reason: ReasonVerifyingPorts, message: "all replicas are ready; waiting for a ready pod of revision " + f.rev},
		portCheck: f.prev.portCheck,
	}
}

// verifying is the row "serving, verdict not yet known": the pod is dialed;
// an open window stays open and the port table stands.
func verifying(f *facts, rep *pod) row {
	r := row{ports: f.prev.ports, portCheck: f.prev.portCheck, jobs: f.dial(rep, false), requeue: true}
	if pc := f.prev.portCheck; pc != nil {
		r.verdict = verdict{available: true, reason: ReasonPortCheckFailing, message: windowMessage(pc, f.cfg.PortCheckGrace, "a declared port refused connections")}
	} else {
		r.verdict = verdict{available: true, reason: ReasonVerifyingPorts, message: fmt.Sprintf("all replicas are ready; verifying %s on pod %s", portList(f.spec.Ports), rep.Metadata.Name)}
	}
	return r
}

// condemned is the row "serving, a port closed past grace": refused by a
// dial made after failingSince + grace, so believed.
func condemned(f *facts, rep *pod, res portcheck.Result, pc *schema.PortCheck) row {
	details := portFailures(res.ClosedPorts(), rep.Metadata.Name, f.rev)
	return row{
		verdict:   verdict{stalled: true, reason: ReasonPortNotListening, message: condemnation(details, pc, f.cfg.PortCheckGrace)},
		details:   details,
		ports:     portsOf(res),
		portCheck: pc,
	}
}

// windowOpen is the row "serving, a port closed, inside grace": the refusal
// is not believed yet — the app may still be binding — so the verdict is
// dropped and the pod dialed again.
func windowOpen(f *facts, rep *pod, res portcheck.Result, pc *schema.PortCheck) row {
	return row{
		verdict:   verdict{available: true, reason: ReasonPortCheckFailing, message: windowMessage(pc, f.cfg.PortCheckGrace, res.Message())},
		ports:     portsOf(res),
		portCheck: pc,
		jobs:      f.dial(rep, true),
		requeue:   true,
	}
}

// servingOpen is the row "serving, all ports open": the window is cleared; a
// stale verdict still counts while it is dialed again.
func servingOpen(f *facts, rep *pod, res portcheck.Result) row {
	r := row{
		verdict: verdict{available: true, converged: true, reason: ReasonServing, message: fmt.Sprintf("%s serves: %s open", f.name, portList(f.spec.Ports))},
		ports:   portsOf(res),
	}
	if res.Stale {
		r.jobs, r.requeue = f.dial(rep, false), true
	}
	return r
}

// unverified is the row of a serving app whose dials were inconclusive:
// never condemned, dialed again.
func unverified(f *facts, rep *pod, res portcheck.Result) row {
	return row{
		verdict:   verdict{available: true, reason: ReasonPortsUnverified, message: res.Message()},
		ports:     portsOf(res),
		portCheck: f.prev.portCheck,
		jobs:      f.dial(rep, false),
		requeue:   true,
	}
}

// windowMessage says why the window is open and until when.
func windowMessage(pc *schema.PortCheck, grace time.Duration, cause string) string {
	deadline := pc.FailingSince.Add(grace).UTC().Format(time.RFC3339)
	return fmt.Sprintf("%s; failing since %s, verifying again until %s", cause, pc.FailingSince.UTC().Format(time.RFC3339), deadline)
}

// condemnation names every refused port of details and since when.
func condemnation(details []schema.FailureDetail, pc *schema.PortCheck, grace time.Duration) string {
	var names []string
	for _, d := range details {
		if d.Port != 0 {
			names = append(names, d.Message)
		}
	}
	return fmt.Sprintf("%s since %s (past the %s grace); roll out a fix to check again", strings.Join(names, "; "),
		pc.FailingSince.UTC().Format(time.RFC3339), grace)
}
