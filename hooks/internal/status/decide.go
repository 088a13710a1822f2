package status

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// Config is what the status depends on besides the request: the timing of
// the port gate and the install's error-page Service. Every field is set
// (hooks.Config fills the defaults).
type Config struct {
	// PortCheckGrace is how long a closed verdict on a serving pod is
	// redialed before it is believed.
	PortCheckGrace time.Duration
	// VerdictRequeue is the resync asked for while a verdict can arrive,
	// and how long after the last pod turned ready a sync with no verdict
	// at all is held for its dial (verifying).
	VerdictRequeue time.Duration
	// BootGrace is how long a running pod may stay not ready before it is
	// reported failing.
	BootGrace time.Duration
	// ChildSettle is how long a child the answer returns may stay
	// unobserved before status says it was not created (childrenSeen).
	ChildSettle time.Duration
	// ErrorService is the chart's error-page Service the ErrorPages
	// condition names; NoErrorService says none is installed.
	ErrorService   observed.ErrorService
	NoErrorService bool
}

// Outcome is the status of one sync, the dials it wants and the resync it
// asks for (zero: none). Hold says the sync must not be answered yet:
// what the status should say hangs on the dials in Jobs, and any status
// answered now could undo what another replica has decided (the row
// "deciding" of the state table); Status and Resync are then unset, and
// Hold says why in one line.
type Outcome struct {
	Status schema.Status
	Jobs   []DialJob
	Resync time.Duration
	Hold   string
}

// Input is everything one status is decided from: the install's Config,
// the parent as the request carries it (its status is the previous one),
// its valid, defaulted Spec and that spec's Revision (the hash of the
// desired pod template), what the request shows (Observed), the storage
// change the StatefulSet cannot take (NotApplied; empty: none), this
// replica's view of the verifier (Verdicts; nil: it knows nothing) and the
// time every new transition is stamped with (Now).
type Input struct {
	Config     Config
	Parent     *observed.Parent
	Spec       schema.Spec
	Revision   string
	Observed   observed.Observed
	NotApplied string
	Verdicts   Verdicts
	Now        metav1.Time
}

// stamper is how this sync stamps the parent's conditions.
func (in *Input) stamper() stamper {
	return stamper{prev: in.Parent.Status.Conditions, generation: in.Parent.Metadata.Generation, now: in.Now}
}

// Decide walks the state table of docs/reference.md for in (table.go) and
// renders the row it lands on as a status that writes only when a fact
// changes (write.go). It performs no I/O and reads no clock, and it changes
// nothing it reads through in.
func Decide(in Input) Outcome {
	if in.Spec.RunsToCompletion() {
		return decideRun(&in)
	}
	f := newFacts(&in)
	r := f.walk()
	if r.held != "" {
		return Outcome{Jobs: r.jobs, Hold: r.held}
	}
	p, spec := in.Parent, in.Spec
	cs := in.stamper()
	seen := factTime(r.at, f.now)
	st := schema.Status{
		ObservedGeneration:   p.Metadata.Generation,
		Revision:             f.specRev,
		Conditions:           cs.healthAt(r.health, seen),
		LastFailureDetails:   observedAt(r.details, f.prev.details, seen),
		Ports:                portTable(spec.Ports, r.ports),
		PortCheck:            portCheck(f.workloadRev, r.failingSince, f.checkedAt(r)),
		ChildrenMissingSince: f.missingSince,
	}
	if c, ok := pagesCondition(in.Config, p.Metadata.Name, spec, in.Observed.Wiring); ok {
		st.Conditions = append(st.Conditions, cs.condition(c))
	}
	if c, ok := middlewaresCondition(p.Metadata.Namespace, spec, in.Observed.Wiring); ok {
		st.Conditions = append(st.Conditions, cs.condition(c))
	}
	if c, ok := configCondition(p.Metadata.Namespace, p.Metadata.Name, spec, in.Observed.Config); ok {
		st.Conditions = append(st.Conditions, cs.condition(c))
	}
	if hosts := spec.RouteHosts(); len(hosts) > 0 && len(spec.PublicPorts()) > 0 {
		st.URL = "https://" + hosts[0]
	}
	out := Outcome{Status: bound(writesFacts(st, p.Status)), Jobs: r.jobs}
	if r.requeue {
		out.Resync = in.Config.VerdictRequeue
	}
	if r.resyncIn > 0 && (out.Resync == 0 || r.resyncIn < out.Resync) {
		out.Resync = r.resyncIn
	}
	return out
}

// scaledToZero is the row of a workload scaled to zero: converged, and
// honest that nothing serves.
func scaledToZero(f *facts) (row, bool) {
	if w := f.workload; f.replicas() != 0 || w == nil || w.Status.Replicas != 0 {
		return row{}, false
	}
	return row{health: health{converged: true, reason: schema.ReasonScaledToZero,
		message: f.workload.Kind + " " + f.name + " is scaled to zero: nothing serves"}}, true
}

// storageNotApplied amends a converged row r when the StatefulSet cannot
// take the spec's storage change: the app is what r says it is, but a
// human must act to apply the change.
func storageNotApplied(f *facts, r row) row {
	if f.notApplied == "" || !r.converged {
		return r
	}
	r.health = health{available: r.available, stalled: true, reason: schema.ReasonStorageNotApplied, message: f.notApplied}
	return r
}
