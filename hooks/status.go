package hooks

import (
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/portcheck"
	"github.com/stackdome/stackdome/schema"
)

// The status of a valid spec is decided in stages, each in its own file:
// this one reads the facts once and walks the state table of
// docs/design.md (decide); revision.go says which pods it speaks of;
// start.go is the rows of pods that cannot start;
// gate.go the serving rows (the grace window, condemnation); rollout.go the
// rows before the app serves; evidence.go which verdict a row reads (this
// replica's own, or the one the status was built from) and the dials it
// owes; ports.go the port table; claims.go the storage a StatefulSet keeps.
// Every row is a small constructor returning a whole row; none changes what
// another reads.

// Verdicts is the read-only view of the port verifier Sync reads. It never
// blocks; *portcheck.Verifier implements it.
type Verdicts interface {
	// Get returns the stored result of the key's revision, if any.
	Get(portcheck.Key) (portcheck.Result, bool)
	// Pending reports whether a dial for the key is queued or in flight.
	Pending(portcheck.Key) bool
}

// DialJob is a dial Sync wants scheduled. Forget asks for the stored verdict
// to be dropped first, so that the next one read is a fresh dial.
type DialJob struct {
	portcheck.Job
	Forget bool
}

// noVerdicts is the view of a verifier that knows nothing yet.
type noVerdicts struct{}

func (noVerdicts) Get(portcheck.Key) (portcheck.Result, bool) { return portcheck.Result{}, false }
func (noVerdicts) Pending(portcheck.Key) bool                 { return false }

// facts is everything one status is decided from, read once per sync and
// never changed afterwards.
type facts struct {
	cfg       Config
	name      string
	namespace string
	spec      schema.Spec
	rev       string    // the spec revision: the hash of the desired pod template
	wrev      string    // the workload revision the pods run (see workloadRevision)
	workload  *workload // nil when missing
	pods      []*pod    // the pods of the spec and workload revision, by name
	all       []pod     // every live related pod, any revision, by name
	verdicts  Verdicts
	now       metav1.Time
	prev      carried
	claims    claims // the storage the StatefulSet keeps, when not the spec's
}

// row is where one sync lands in the state table: the verdict and every
// part of the status that goes with it, and the dials it asks for.
type row struct {
	verdict
	details      []schema.FailureDetail
	ports        []schema.PortStatus // the port table's source; absent ports read Unknown
	failingSince *metav1.Time        // the open grace window, if any
	evidence     *evidence           // the verdict the row was decided from, if any
	jobs         []DialJob
	requeue      bool // an answer can arrive: ask to be called back
}

// outcome is the status of one sync, the dials it wants and whether it asks
// to be called back.
type outcome struct {
	status schema.Status
	jobs   []DialJob
	resync time.Duration
}

// decide walks the state table of docs/design.md for a valid spec.
func decide(cfg Config, p *parent, spec schema.Spec, rev string, obs observed, cl claims, verdicts Verdicts, now metav1.Time) outcome {
	current := currentPods(obs.pods, rev)
	wrev := workloadRevision(obs.workload, current, rev)
	f := &facts{
		cfg: cfg, name: p.Metadata.Name, namespace: p.Metadata.Namespace, spec: spec, rev: rev, wrev: wrev,
		workload: obs.workload, pods: ofRevision(current, obs.workload, wrev), all: obs.pods, verdicts: verdicts, now: now,
		prev: carry(p.Status, rev, wrev), claims: cl,
	}
	r := f.walk()
	st := schema.Status{
		ObservedGeneration: p.Metadata.Generation,
		Revision:           rev,
		Conditions:         conditions(r.verdict, p.Status.Conditions, p.Metadata.Generation, now),
		LastFailureDetails: stamp(r.details, f.prev.details, now),
		Ports:              portTable(spec.Ports, r.ports),
	}
	if pv, ok := pagesCondition(cfg, p.Metadata.Name, spec, obs.wiring); ok {
		st.Conditions = append(st.Conditions, condition(p.Status.Conditions, schema.CondErrorPages, pv.wired, pv.reason, clip(pv.message), p.Metadata.Generation, now))
	}
	if spec.Host != "" && len(spec.PublicPorts()) > 0 {
		st.URL = "https://" + spec.Host
	}
	st.PortCheck = f.portCheck(r, p.Status, st)
	out := outcome{status: st, jobs: r.jobs}
	if r.requeue {
		out.resync = cfg.VerdictRequeue
	}
	return out
}

// portCheck is the gate's memory in the new status st: the workload
// revision, the grace window, and when the dial was made whose verdict last
// changed the status. A verdict of this replica that leaves everything else
// as it was changes nothing, not even that time: a status changes only when
// a verdict dialed later than the one it was built from says something new.
func (f *facts) portCheck(r row, prev, st schema.Status) *schema.PortCheck {
	pc := &schema.PortCheck{Revision: f.wrev, FailingSince: r.failingSince, CheckedAt: f.prev.checkedAt}
	if ev := r.evidence; ev != nil && !ev.fromStatus {
		at := metav1.NewMicroTime(ev.res.CheckedAt.UTC().Truncate(time.Microsecond))
		pc.CheckedAt = &at
		if f.prev.verdict != nil {
			// Would the status be the same without this verdict's time?
			same := st
			same.PortCheck = &schema.PortCheck{Revision: f.wrev, FailingSince: r.failingSince, CheckedAt: f.prev.checkedAt}
			if equalStatus(same, prev) {
				pc.CheckedAt = f.prev.checkedAt
			}
		}
	}
	if pc.CheckedAt == nil && pc.FailingSince == nil {
		return nil
	}
	return pc
}

// equalStatus compares two statuses as the API server stores them (times
// to the second, checkedAt to the microsecond), observedGeneration aside:
// Metacontroller sets it. It runs on every sync a replica reads its own
// verdict in, so it compares field by field rather than encoding both.
func equalStatus(a, b schema.Status) bool {
	return a.Revision == b.Revision && a.URL == b.URL &&
		slices.EqualFunc(a.Conditions, b.Conditions, func(x, y metav1.Condition) bool {
			return x.Type == y.Type && x.Status == y.Status && x.Reason == y.Reason && x.Message == y.Message &&
				x.ObservedGeneration == y.ObservedGeneration && x.LastTransitionTime.Equal(&y.LastTransitionTime)
		}) &&
		slices.EqualFunc(a.LastFailureDetails, b.LastFailureDetails, func(x, y schema.FailureDetail) bool {
			return x.Type == y.Type && x.Reason == y.Reason && x.Message == y.Message && x.Container == y.Container &&
				x.Port == y.Port && x.Revision == y.Revision && equalPtr(x.ExitCode, y.ExitCode) && x.ObservedAt.Equal(y.ObservedAt)
		}) &&
		slices.Equal(a.Ports, b.Ports) && equalPortCheck(a.PortCheck, b.PortCheck)
}

func equalPortCheck(a, b *schema.PortCheck) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Revision == b.Revision && a.FailingSince.Equal(b.FailingSince) &&
		(a.CheckedAt == nil) == (b.CheckedAt == nil) && (a.CheckedAt == nil || a.CheckedAt.Equal(b.CheckedAt))
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// walk is the state table, row by row, most specific cause first.
func (f *facts) walk() row {
	if crashes := crashDetails(f.pods, f.wrev); len(crashes) > 0 {
		return crashing(f, crashes)
	}
	serving := f.serving()
	if !serving {
		// A crash seen before is kept while the app is not serving: a
		// crash-looping container is Running between restarts, and a port
		// verdict taken then must not overwrite the real cause.
		if kept := f.prev.of(schema.RuntimeCrash, f.wrev); len(kept) > 0 {
			return crashing(f, kept)
		}
		if r, ok := f.cannotStart(); ok {
			return r
		}
	}
	var r row
	switch w := f.workload; {
	case f.replicas() == 0 && w != nil && w.Status.Replicas == 0:
		r = scaledToZero(f)
	case serving:
		r = f.servingGate()
	default:
		r = f.notServing()
	}
	if f.claims.notApplied != "" && r.converged {
		return storageNotApplied(f, r)
	}
	return r
}

// crashing is the row "container crash-looping / OOMKilled / exiting" (and
// the image-pull and container-config failures that stop it the same way):
// the first crash names the reason; the port table and the window stand as
// they were.
func crashing(f *facts, crashes []schema.FailureDetail) row {
	return row{
		verdict:      verdict{reason: crashReason(crashes[0]), message: crashes[0].Message},
		details:      crashes,
		ports:        f.prev.ports,
		failingSince: f.prev.failingSince,
	}
}

// scaledToZero is the row of a workload scaled to zero: converged, and
// honest that nothing serves.
func scaledToZero(f *facts) row {
	return row{verdict: verdict{converged: true, reason: schema.ReasonScaledToZero,
		message: f.workload.Kind + " " + f.name + " is scaled to zero: nothing serves"}}
}

// storageNotApplied is the row "a spec change the workload cannot take":
// the app is what r says it is, but a human must act to apply the change.
func storageNotApplied(f *facts, r row) row {
	r.verdict = verdict{available: r.available, stalled: true, reason: schema.ReasonStorageNotApplied, message: f.claims.notApplied}
	return r
}

// serving reports whether the workload runs the current revision with every
// replica updated, ready and available.
func (f *facts) serving() bool {
	w, replicas := f.workload, f.replicas()
	if w == nil || replicas == 0 || w.Spec.Template.Metadata.Annotations[schema.AnnotationRevision] != f.rev {
		return false
	}
	st := w.Status
	return st.ObservedGeneration >= w.Metadata.Generation && st.Replicas == replicas &&
		st.UpdatedReplicas == replicas && st.ReadyReplicas == replicas && st.AvailableReplicas == replicas
}

// stamp returns ds with each detail's observedAt set — carried over from
// prev when the same failure was already recorded, else now — and its
// message clipped. ds is not changed.
func stamp(ds, prev []schema.FailureDetail, now metav1.Time) []schema.FailureDetail {
	if ds == nil {
		return nil
	}
	out := make([]schema.FailureDetail, len(ds))
	for i, d := range ds {
		d.ObservedAt = &now
		for _, p := range prev {
			if p.ObservedAt != nil && p.Type == d.Type && p.Reason == d.Reason && p.Container == d.Container && p.Port == d.Port {
				d.ObservedAt = p.ObservedAt
				break
			}
		}
		d.Message = clip(d.Message)
		out[i] = d
	}
	return out
}
