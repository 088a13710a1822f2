package hooks

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/portcheck"
	"github.com/stackdome/stackdome/schema"
)

// The status of a valid spec is decided in stages, each in its own file:
// this one reads the facts once and walks the state table of
// docs/design.md (decide); gate.go is the serving rows (the grace window,
// condemnation); rollout.go the rows before the app serves; ports.go the
// port table and the dials. Every row is a small constructor returning a
// whole row; none changes what another reads.

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
	rev       string
	workload  *workload // nil when missing
	pods      []*pod    // the related pods of the current revision, by name
	verdicts  Verdicts
	now       metav1.Time
	prev      carried
}

// carried is what the previous status says about the current revision;
// a new revision starts from nothing.
type carried struct {
	portCheck *schema.PortCheck
	details   []schema.FailureDetail
	ports     []schema.PortStatus
	condemned bool // the previous status already condemned this revision
}

// row is where one sync lands in the state table: the verdict and every
// part of the status that goes with it, and the dials it asks for.
type row struct {
	verdict
	details   []schema.FailureDetail
	ports     []schema.PortStatus // the port table's source; absent ports read Unknown
	portCheck *schema.PortCheck
	jobs      []DialJob
	requeue   bool // an answer can arrive: ask to be called back
}

// outcome is the status of one sync, the dials it wants and whether it asks
// to be called back.
type outcome struct {
	status schema.Status
	jobs   []DialJob
	resync time.Duration
}

// decide walks the state table of docs/design.md for a valid spec.
func decide(cfg Config, p *parent, spec schema.Spec, rev string, obs observed, verdicts Verdicts, now metav1.Time) outcome {
	f := &facts{
		cfg: cfg, name: p.Metadata.Name, namespace: p.Metadata.Namespace, spec: spec, rev: rev,
		workload: obs.workload, pods: currentPods(obs.pods, rev), verdicts: verdicts, now: now,
		prev: carry(p.Status, rev),
	}
	r := f.walk()
	st := schema.Status{
		ObservedGeneration: p.Metadata.Generation,
		Revision:           rev,
		Conditions:         conditions(r.verdict, p.Status.Conditions, p.Metadata.Generation, now),
		LastFailureDetails: stamp(r.details, f.prev.details, now),
		PortCheck:          r.portCheck,
		Ports:              portTable(spec.Ports, r.ports),
	}
	if spec.Host != "" && len(spec.PublicPorts()) > 0 {
		st.URL = "https://" + spec.Host
	}
	out := outcome{status: st, jobs: r.jobs}
	if r.requeue {
		out.resync = cfg.VerdictRequeue
	}
	return out
}

// carry reads what the previous status knew of revision rev.
func carry(prev schema.Status, rev string) carried {
	var c carried
	if prev.Revision != rev {
		return c // a new revision resets the window, the verdicts and the port table
	}
	if prev.PortCheck != nil && prev.PortCheck.Revision == rev {
		pc := *prev.PortCheck
		c.portCheck = &pc
	}
	for _, d := range prev.LastFailureDetails {
		if d.Revision == rev {
			c.details = append(c.details, d)
		}
	}
	c.ports = prev.Ports
	if s := find(prev.Conditions, CondStalled); s != nil && s.Status == metav1.ConditionTrue && s.Reason == string(ReasonPortNotListening) && c.portCheck != nil {
		c.condemned = true
	}
	return c
}

// of returns the carried details of type t, as a new slice.
func (c carried) of(t schema.FailureType) []schema.FailureDetail {
	var out []schema.FailureDetail
	for _, d := range c.details {
		if d.Type == t {
			out = append(out, d)
		}
	}
	return out
}

// walk is the state table, row by row, most specific cause first.
func (f *facts) walk() row {
	if crashes := crashDetails(f.pods, f.rev); len(crashes) > 0 {
		return crashing(f, crashes, nil)
	}
	serving := f.serving()
	if !serving {
		// A crash seen before is kept while the app is not serving: a
		// crash-looping container is Running between restarts, and a port
		// verdict taken then must not overwrite the real cause.
		if kept := f.prev.of(schema.RuntimeCrash); len(kept) > 0 {
			return crashing(f, kept, f.prev.portCheck)
		}
	}
	if w := f.workload; *f.spec.Replicas == 0 && w != nil && w.Status.Replicas == 0 {
		return scaledToZero(f)
	}
	if serving {
		return f.servingGate()
	}
	return f.notServing()
}

// crashing is the row "container crash-looping / OOMKilled / exiting" (and
// the image-pull and container-config failures that stop it the same way):
// the first crash names the reason; the port table stands as it was.
func crashing(f *facts, crashes []schema.FailureDetail, pc *schema.PortCheck) row {
	return row{
		verdict:   verdict{reason: crashReason(crashes[0]), message: crashes[0].Message},
		details:   crashes,
		ports:     f.prev.ports,
		portCheck: pc,
	}
}

// scaledToZero is the row of a workload scaled to zero: converged, and
// honest that nothing serves.
func scaledToZero(f *facts) row {
	return row{verdict: verdict{converged: true, reason: ReasonScaledToZero,
		message: f.workload.Kind + " " + f.name + " is scaled to zero: nothing serves"}}
}

// currentPods are the pods of revision rev, in the order given (by name).
func currentPods(pods []pod, rev string) []*pod {
	var out []*pod
	for i := range pods {
		if pods[i].Metadata.Annotations[AnnotationRevision] == rev {
			out = append(out, &pods[i])
		}
	}
	return out
}

// serving reports whether the workload runs the current revision with every
// replica updated, ready and available.
func (f *facts) serving() bool {
	w, replicas := f.workload, *f.spec.Replicas
	if w == nil || replicas == 0 || w.Spec.Template.Metadata.Annotations[AnnotationRevision] != f.rev {
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
