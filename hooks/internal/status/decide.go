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
	// VerdictRequeue is the resync asked for while a verdict can arrive.
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

// facts is everything one status is decided from, read once per sync and
// never changed afterwards.
type facts struct {
	cfg       Config
	name      string
	namespace string
	spec      schema.Spec
	rev       string              // the spec revision: the hash of the desired pod template
	wrev      string              // the workload revision the pods run (see workloadRevision)
	workload  *observed.Child     // nil when missing
	pods      []*observed.Related // the pods of the spec and workload revision, by name
	all       []observed.Related  // every live related pod, any revision, by name
	verdicts  Verdicts
	now       metav1.Time
	prev      carried
	// notApplied is the storage change the StatefulSet cannot take
	// (children.Claims), if any.
	notApplied string
}

// row is where one sync lands in the state table: its health and every
// part of the status that goes with it, and the dials it asks for.
type row struct {
	health
	details      []schema.FailureDetail
	ports        []schema.PortStatus // the port table's source; absent ports read Unknown
	failingSince *metav1.Time        // the open grace window, if any
	evidence     *evidence           // the verdict the row was decided from, if any
	// at is when the row's fact became true, when the row knows it
	// independently of this sync (a condemnation: the grace's end): what a
	// transition it makes and the failure details it adds are stamped with,
	// instead of now. Two syncs deciding the same fact — on two replicas, or
	// one from a parent whose status write has not reached Metacontroller's
	// cache yet, whose answer Metacontroller writes over the first anyway
	// (it reads the object afresh and replaces its status:
	// metacontroller/metacontroller@v4.17.2
	// pkg/dynamic/clientset/clientset.go, AtomicStatusUpdate) — then stamp
	// it alike, and the second writes nothing.
	at      *metav1.Time
	jobs    []DialJob
	requeue bool // an answer can arrive: ask to be called back
	// resyncIn asks to be called back this soon (0: no), besides requeue.
	resyncIn time.Duration
	// held, when not empty, withholds the answer until the dials in jobs
	// have landed, and says why (Outcome.Hold); every other field but jobs
	// is then unused.
	held string
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

// Decide walks the state table of docs/design.md for in. It performs no
// I/O and reads no clock, and it changes nothing it reads through in.
func Decide(in Input) Outcome {
	if in.Spec.RunsToCompletion() {
		return decideRun(&in)
	}
	p, spec, rev, obs, now := in.Parent, in.Spec, in.Revision, &in.Observed, in.Now
	verdicts := in.Verdicts
	if verdicts == nil {
		verdicts = noVerdicts{}
	}
	current := currentPods(obs.Pods, rev)
	wrev := workloadRevision(obs.Workload, current, rev)
	f := &facts{
		cfg: in.Config, name: p.Metadata.Name, namespace: p.Metadata.Namespace, spec: spec, rev: rev, wrev: wrev,
		workload: obs.Workload, pods: ofRevision(current, obs.Workload, wrev), all: obs.Pods, verdicts: verdicts, now: now,
		prev: carry(p.Status, rev, wrev), notApplied: in.NotApplied,
	}
	r := f.walk()
	if r.held != "" {
		return Outcome{Jobs: r.jobs, Hold: r.held}
	}
	missingSince := childrenMissingSince(p.Status.ChildrenMissingSince, obs.Missing, now)
	r = childrenSeen(f, r, obs.Missing, missingSince)
	cs := in.stamper()
	seen := factTime(r.at, now)
	st := schema.Status{
		ObservedGeneration: p.Metadata.Generation,
		Revision:           rev,
		Conditions:         cs.healthAt(r.health, seen),
		LastFailureDetails: stamp(r.details, f.prev.details, seen),
		Ports:              portTable(spec.Ports, r.ports),
		// Set before portCheck, which compares the whole status.
		ChildrenMissingSince: missingSince,
	}
	if c, ok := pagesCondition(in.Config, p.Metadata.Name, spec, obs.Wiring); ok {
		st.Conditions = append(st.Conditions, cs.condition(c))
	}
	if c, ok := middlewaresCondition(p.Metadata.Namespace, spec, obs.Wiring); ok {
		st.Conditions = append(st.Conditions, cs.condition(c))
	}
	if c, ok := configCondition(p.Metadata.Namespace, p.Metadata.Name, spec, obs.Config); ok {
		st.Conditions = append(st.Conditions, cs.condition(c))
	}
	if hosts := spec.RouteHosts(); len(hosts) > 0 && len(spec.PublicPorts()) > 0 {
		st.URL = "https://" + hosts[0]
	}
	st.PortCheck = f.portCheck(r, p.Status, st)
	st = keepAnchor(f, r, p.Status, st)
	out := Outcome{Status: bound(st), Jobs: r.jobs}
	if r.requeue {
		out.Resync = in.Config.VerdictRequeue
	}
	if r.resyncIn > 0 && (out.Resync == 0 || r.resyncIn < out.Resync) {
		out.Resync = r.resyncIn
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
	if f.notApplied != "" && r.converged {
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
		health:       health{reason: crashReason(crashes[0]), message: crashes[0].Message},
		details:      crashes,
		ports:        f.prev.ports,
		failingSince: f.prev.failingSince,
	}
}

// scaledToZero is the row of a workload scaled to zero: converged, and
// honest that nothing serves.
func scaledToZero(f *facts) row {
	return row{health: health{converged: true, reason: schema.ReasonScaledToZero,
		message: f.workload.Kind + " " + f.name + " is scaled to zero: nothing serves"}}
}

// storageNotApplied is the row "a spec change the workload cannot take":
// the app is what r says it is, but a human must act to apply the change.
func storageNotApplied(f *facts, r row) row {
	r.health = health{available: r.available, stalled: true, reason: schema.ReasonStorageNotApplied, message: f.notApplied}
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

// Stamp is t as a status keeps a time: whole seconds in UTC, what survives
// a round trip through the API server (metav1.Time is RFC 3339), so a
// status fed back compares equal.
func Stamp(t time.Time) metav1.Time {
	return metav1.NewTime(t.UTC().Truncate(time.Second))
}

// factTime is at as Stamp keeps it, or now when at is unknown or later
// than now.
func factTime(at *metav1.Time, now metav1.Time) metav1.Time {
	if at == nil {
		return now
	}
	t := Stamp(at.Time)
	if now.Before(&t) {
		return now
	}
	return t
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

// keepAnchor returns st with the previous status's childrenMissingSince
// kept when every child is observed again but nothing else changed: the
// anchor alone is not worth a status write (a new object's first sync,
// which Metacontroller sends before creating anything, sets it, and the
// next one sees the children), so it goes with the next write that tells
// the user something. Meanwhile it is read only if a child goes missing
// again, which is then timed from the first absence, as two absences
// without a write between them are one.
func keepAnchor(f *facts, r row, prev, st schema.Status) schema.Status {
	if st.ChildrenMissingSince != nil || prev.ChildrenMissingSince == nil {
		return st
	}
	kept := st
	kept.ChildrenMissingSince = prev.ChildrenMissingSince
	kept.PortCheck = f.portCheck(r, prev, kept)
	if equalStatus(kept, prev) {
		return kept
	}
	return st
}
