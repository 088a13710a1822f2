package status

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// facts is everything one status is decided from, read once per sync. The
// rows of the state table read it and never change what another row reads:
// the two views below are read on first use and kept as read.
type facts struct {
	cfg         Config
	name        string
	namespace   string
	spec        schema.Spec
	specRev     string              // the spec revision: the hash of the desired pod template
	workloadRev string              // the workload revision the pods run (see workloadRevision)
	workload    *observed.Child     // nil when missing
	pods        []*observed.Related // the pods of the spec and workload revision, by name
	all         []observed.Related  // every live related pod, any revision, by name
	runs        []observed.Run      // a Job's or CronJob's runs (the run-to-completion types)
	verdicts    Verdicts
	now         metav1.Time
	prev        carried
	// notApplied is the storage change the StatefulSet cannot take
	// (children.Claims), if any.
	notApplied string
	// serving: the workload runs the spec revision with every replica
	// updated, ready and available (isServing).
	serving bool
	// missing are the children the answer returns that the request does
	// not show; missingSince is the settle window's anchor in the new status
	// (childrenMissingSince).
	missing      []observed.ChildRef
	missingSince *metav1.Time

	// The serving rows' reading of the verdicts (readGate) and the rows
	// before serving's (readProbe), once read.
	gate             gateView
	probe            probe
	gateRead, probed bool
}

// newFacts reads in once: the pods of the spec revision, the workload
// revision they run, what the previous status carries of both.
func newFacts(in *Input) *facts {
	p, obs := in.Parent, &in.Observed
	verdicts := in.Verdicts
	if verdicts == nil {
		verdicts = noVerdicts{}
	}
	current := currentPods(obs.Pods, in.Revision)
	workloadRev := workloadRevision(obs.Workload, current, in.Revision)
	f := &facts{
		cfg: in.Config, name: p.Metadata.Name, namespace: p.Metadata.Namespace, spec: in.Spec,
		specRev: in.Revision, workloadRev: workloadRev, workload: obs.Workload,
		pods: ofRevision(current, obs.Workload, workloadRev), all: obs.Pods, verdicts: verdicts, now: in.Now,
		prev: carry(p.Status, in.Revision, workloadRev), notApplied: in.NotApplied,
		missing: obs.Missing, missingSince: childrenMissingSince(p.Status.ChildrenMissingSince, obs.Missing, in.Now),
	}
	f.serving = f.isServing()
	return f
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

// isServing reports whether the workload runs the current revision with
// every replica updated, ready and available.
func (f *facts) isServing() bool {
	w, replicas := f.workload, f.replicas()
	if w == nil || replicas == 0 || w.Spec.Template.Metadata.Annotations[schema.AnnotationRevision] != f.specRev {
		return false
	}
	st := w.Status
	return st.ObservedGeneration >= w.Metadata.Generation && st.Replicas == replicas &&
		st.UpdatedReplicas == replicas && st.ReadyReplicas == replicas && st.AvailableReplicas == replicas
}

// gateView is what the serving rows read: the ready pod whose ports are
// dialed (nil: none has reached the hook yet), the newest verdict on it
// (known false: none) and the ports it proves closed.
type gateView struct {
	rep    *observed.Related
	ev     evidence
	known  bool
	closed bool
}

// readGate is the serving rows' view, read on first use.
func (f *facts) readGate() gateView {
	if !f.gateRead {
		g := gateView{rep: representative(f.pods, true)}
		if g.rep != nil {
			g.ev, g.known = f.evidenceFor(g.rep)
			g.closed = g.known && len(g.ev.res.ClosedPorts()) > 0
		}
		f.gate, f.gateRead = g, true
	}
	return f.gate
}

// readProbe is the rows before serving's view (probeNotServing), read on
// first use.
func (f *facts) readProbe() probe {
	if !f.probed {
		f.probe, f.probed = f.probeNotServing(), true
	}
	return f.probe
}
