package hooks

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/portcheck"
	"github.com/stackdome/stackdome/schema"
)

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

// state is everything that decides one status; it is built once per sync.
type state struct {
	cfg      Config
	parent   *parent
	spec     schema.Spec
	rev      string
	obs      observed
	verdicts Verdicts
	now      metav1.Time

	// carried from the previous status, for the current revision only
	portCheck   *schema.PortCheck
	prevDetails []schema.FailureDetail
	prevPorts   []schema.PortStatus
	condemned   bool // the previous status already condemned this revision

	// results
	details []schema.FailureDetail
	ports   []schema.PortStatus
	jobs    []DialJob
	requeue bool
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
	s := &state{cfg: cfg, parent: p, spec: spec, rev: rev, obs: obs, verdicts: verdicts, now: now}
	prev := p.Status
	if prev.Revision == rev {
		// A new revision resets the window, the verdicts and the port table.
		if prev.PortCheck != nil && prev.PortCheck.Revision == rev {
			pc := *prev.PortCheck
			s.portCheck = &pc
		}
		for _, d := range prev.LastFailureDetails {
			if d.Revision == rev {
				s.prevDetails = append(s.prevDetails, d)
			}
		}
		s.prevPorts = prev.Ports
		if c := find(prev.Conditions, CondStalled); c != nil && c.Status == metav1.ConditionTrue && c.Reason == ReasonPortNotListening && s.portCheck != nil {
			s.condemned = true
		}
	}
	v := s.walk()

	st := schema.Status{
		ObservedGeneration: p.Metadata.Generation,
		Revision:           rev,
		Conditions:         conditions(v, prev.Conditions, p.Metadata.Generation, now),
		LastFailureDetails: s.stamp(s.details),
		PortCheck:          s.portCheck,
		Ports:              s.portTable(),
	}
	if spec.Host != "" && len(spec.PublicPorts()) > 0 {
		st.URL = "https://" + spec.Host
	}
	out := outcome{status: st, jobs: s.jobs}
	if s.requeue {
		out.resync = cfg.VerdictRequeue
	}
	return out
}

// walk is the state table, row by row, most specific cause first.
func (s *state) walk() verdict {
	w := s.obs.workload
	replicas := *s.spec.Replicas
	current := s.currentPods()

	if crashes := crashDetails(current, s.rev); len(crashes) > 0 {
		s.portCheck = nil
		s.details = crashes
		s.readPorts(nil)
		return verdict{reason: crashReason(crashes[0]), message: crashes[0].Message}
	}
	serving := s.serving(w, replicas)
	if !serving {
		// A crash seen before is kept while the app is not serving: a
		// crash-looping container is Running between restarts, and a port
		// verdict taken then must not overwrite the real cause.
		for _, d := range s.prevDetails {
			if d.Type == schema.RuntimeCrash {
				s.details = append(s.details, d)
			}
		}
		if len(s.details) > 0 {
			s.readPorts(nil)
			return verdict{reason: crashReason(s.details[0]), message: s.details[0].Message}
		}
	}
	if replicas == 0 && w != nil && w.Status.Replicas == 0 {
		s.portCheck = nil
		return verdict{converged: true, reason: ReasonScaledToZero, message: fmt.Sprintf("%s %s is scaled to zero: nothing serves", w.Kind, s.parent.Metadata.Name)}
	}
	if serving {
		return s.servingGate(current)
	}
	return s.notServing(w, replicas, current)
}

// currentPods are the related pods of the current revision, by name.
func (s *state) currentPods() []*pod {
	var out []*pod
	for i := range s.obs.pods {
		if s.obs.pods[i].Metadata.Annotations[AnnotationRevision] == s.rev {
			out = append(out, &s.obs.pods[i])
		}
	}
	return out
}

// serving reports whether the workload runs the current revision with every
// replica updated, ready and available.
func (s *state) serving(w *workload, replicas int32) bool {
	if w == nil || replicas == 0 || w.Spec.Template.Metadata.Annotations[AnnotationRevision] != s.rev {
		return false
	}
	st := w.Status
	return st.ObservedGeneration >= w.Metadata.Generation && st.Replicas == replicas &&
		st.UpdatedReplicas == replicas && st.ReadyReplicas == replicas && st.AvailableReplicas == replicas
}

// servingGate is the serving rows: every replica ready, and the verifier
// asked whether every declared port really listens.
func (s *state) servingGate(current []*pod) verdict {
	name := s.parent.Metadata.Name
	if len(s.spec.Ports) == 0 {
		s.portCheck = nil
		return verdict{available: true, converged: true, reason: ReasonServing, message: "all replicas are ready; no ports are declared"}
	}
	if s.condemned {
		// Terminal for this revision: no more dials, no more requeues.
		for _, d := range s.prevDetails {
			if d.Type == schema.ReadinessFailure {
				s.details = append(s.details, d)
			}
		}
		s.ports = s.prevPorts
		return verdict{stalled: true, reason: ReasonPortNotListening, message: s.condemnation()}
	}
	rep := representative(current, true)
	if rep == nil {
		// Counted ready by the workload, but no ready pod of this revision
		// has reached us yet: wait for the pod event.
		return verdict{available: true, reason: ReasonVerifyingPorts, message: "all replicas are ready; waiting for a ready pod of revision " + s.rev}
	}
	res, ok := s.result(rep)
	if !ok {
		s.dial(rep, false)
		s.readPorts(nil)
		if s.portCheck != nil {
			return verdict{available: true, reason: ReasonPortCheckFailing, message: s.windowMessage("a declared port refused connections")}
		}
		return verdict{available: true, reason: ReasonVerifyingPorts, message: fmt.Sprintf("all replicas are ready; verifying %s on pod %s", portList(s.spec.Ports), rep.Metadata.Name)}
	}
	s.readPorts(&res)
	if closed := res.ClosedPorts(); len(closed) > 0 {
		if s.portCheck == nil {
			s.portCheck = &schema.PortCheck{Revision: s.rev, FailingSince: s.now}
		}
		deadline := s.portCheck.FailingSince.Add(s.cfg.PortCheckGrace)
		if !res.CheckedAt.Before(deadline) {
			// Refused by a dial made after the grace window: believed.
			s.details = portFailures(closed, rep.Metadata.Name, s.rev)
			return verdict{stalled: true, reason: ReasonPortNotListening, message: s.condemnation()}
		}
		// Inside the window the refusal is not believed — the app may
		// still be binding — so it is dropped and dialed again.
		s.dial(rep, true)
		return verdict{available: true, reason: ReasonPortCheckFailing, message: s.windowMessage(res.Message())}
	}
	if res.AllOpen() {
		s.portCheck = nil
		if res.Stale {
			s.dial(rep, false) // redialed while the old verdict still counts
		}
		return verdict{available: true, converged: true, reason: ReasonServing, message: fmt.Sprintf("%s serves: %s open", name, portList(s.spec.Ports))}
	}
	s.dial(rep, false) // inconclusive never condemns; it is dialed again
	return verdict{available: true, reason: ReasonPortsUnverified, message: res.Message()}
}

// notServing is the rows before every replica is ready: missing workload,
// rollout, boot, and the provisional diagnosis of a closed port.
func (s *state) notServing(w *workload, replicas int32, current []*pod) verdict {
	name := s.parent.Metadata.Name
	rep := representative(current, false)
	if rep != nil && len(s.spec.Ports) > 0 {
		res, ok := s.result(rep)
		switch {
		case !ok:
			s.dial(rep, false)
		case len(res.ClosedPorts()) > 0:
			// Not believed enough to stall, but named at once, so that
			// "my app listens on the wrong port" is seen within one requeue.
			s.dial(rep, false)
			s.readPorts(&res)
			s.details = portFailures(res.ClosedPorts(), rep.Metadata.Name, s.rev)
			return verdict{reason: ReasonPortNotListening, message: "provisional: pod " + rep.Metadata.Name + " is not ready and " + res.Message()}
		case !res.AllOpen() || res.Stale:
			s.dial(rep, false)
		}
		if ok {
			s.readPorts(&res)
		} else {
			s.readPorts(nil)
		}
	} else {
		s.readPorts(nil)
	}
	if w != nil && w.Kind != "StatefulSet" {
		for _, c := range w.Status.Conditions {
			if c.Type == "Progressing" && c.Status == "False" && c.Reason == ReasonDeadlineExceeded {
				return verdict{stalled: true, reason: ReasonDeadlineExceeded, message: clip("Deployment " + name + ": " + c.Message)}
			}
		}
	}
	if rep != nil {
		if ready, _ := rep.ready(); !ready {
			since := notReadySince(rep)
			if s.now.Sub(since.Time) >= s.cfg.BootGrace {
				msg := fmt.Sprintf("pod %s has been running but not ready since %s", rep.Metadata.Name, since.UTC().Format(time.RFC3339))
				s.details = []schema.FailureDetail{{Type: schema.ReadinessFailure, Reason: ReasonNotReady, Message: msg, Container: containerName, Revision: s.rev}}
				return verdict{reason: ReasonNotReady, message: msg}
			}
		}
	}
	return verdict{reason: ReasonProgressing, message: rollout(w, name, s.rev, replicas)}
}

// rollout says what the workload is waiting for.
func rollout(w *workload, name, rev string, replicas int32) string {
	if w == nil {
		return "waiting for the workload " + name + " to be created"
	}
	if w.Spec.Template.Metadata.Annotations[AnnotationRevision] != rev {
		return fmt.Sprintf("waiting for %s %s to take revision %s", w.Kind, name, rev)
	}
	st := w.Status
	if st.ObservedGeneration < w.Metadata.Generation {
		return fmt.Sprintf("waiting for %s %s to observe generation %d", w.Kind, name, w.Metadata.Generation)
	}
	return fmt.Sprintf("%s %s rolling out revision %s: %d of %d replicas updated, %d ready", w.Kind, name, rev, st.UpdatedReplicas, replicas, st.ReadyReplicas)
}

// representative picks the pod whose ports are dialed: a Running pod of the
// current revision with an IP, Ready when serving; otherwise a not-ready one
// first, the likelier to explain why the app is not serving.
func representative(current []*pod, serving bool) *pod {
	var fallback *pod
	for _, p := range current {
		if p.Status.Phase != "Running" || p.Status.PodIP == "" {
			continue
		}
		ready, _ := p.ready()
		if ready == serving {
			return p
		}
		if !serving && fallback == nil {
			fallback = p
		}
	}
	return fallback
}

// notReadySince is when the pod last turned not ready, else when it started.
func notReadySince(p *pod) metav1.Time {
	if ready, t := p.ready(); !ready && !t.IsZero() {
		return t
	}
	if p.Status.StartTime != nil {
		return *p.Status.StartTime
	}
	return metav1.Time{}
}

func (s *state) key() portcheck.Key {
	return portcheck.Key{Namespace: s.parent.Metadata.Namespace, Name: s.parent.Metadata.Name, Revision: s.rev}
}

// result returns the verifier's verdict on this pod; one about another pod
// of the revision (since replaced) says nothing about this one.
func (s *state) result(rep *pod) (portcheck.Result, bool) {
	res, ok := s.verdicts.Get(s.key())
	if !ok || res.IP != rep.Status.PodIP {
		return portcheck.Result{}, false
	}
	return res, true
}

// dial asks for the pod's declared ports to be dialed, unless a dial is
// already pending; either way an answer can arrive, so the sync asks to be
// called back.
func (s *state) dial(rep *pod, forget bool) {
	s.requeue = true
	if s.verdicts.Pending(s.key()) {
		return
	}
	ports := make([]portcheck.Port, len(s.spec.Ports))
	for i, p := range s.spec.Ports {
		ports[i] = portcheck.Port{Name: p.Name, Port: p.Port}
	}
	s.jobs = append(s.jobs, DialJob{Job: portcheck.Job{Key: s.key(), IP: rep.Status.PodIP, Ports: ports}, Forget: forget})
}

// readPorts records the per-port table from a verdict; without one the
// previous table of this revision stands, else every port is Unknown.
func (s *state) readPorts(res *portcheck.Result) {
	if res == nil {
		s.ports = s.prevPorts
		return
	}
	s.ports = make([]schema.PortStatus, 0, len(res.Ports))
	for _, p := range res.Ports {
		st := schema.PortUnknown
		switch p.State {
		case portcheck.Open:
			st = schema.PortOpen
		case portcheck.Closed:
			st = schema.PortClosed
		}
		s.ports = append(s.ports, schema.PortStatus{Name: p.Name, Port: p.Port, State: st})
	}
}

// portTable is the per-port status: one row per declared port, in order.
func (s *state) portTable() []schema.PortStatus {
	known := map[int32]schema.PortState{}
	for _, p := range s.ports {
		known[p.Port] = p.State
	}
	out := make([]schema.PortStatus, 0, len(s.spec.Ports))
	for _, p := range s.spec.Ports {
		st, ok := known[p.Port]
		if !ok {
			st = schema.PortUnknown
		}
		out = append(out, schema.PortStatus{Name: p.Name, Port: p.Port, State: st})
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// stamp sets each detail's observedAt: carried over from the previous status
// when the same failure was already recorded, else now.
func (s *state) stamp(ds []schema.FailureDetail) []schema.FailureDetail {
	for i := range ds {
		ds[i].ObservedAt = &s.now
		for _, p := range s.prevDetails {
			if p.ObservedAt != nil && p.Type == ds[i].Type && p.Reason == ds[i].Reason && p.Container == ds[i].Container && p.Port == ds[i].Port {
				ds[i].ObservedAt = p.ObservedAt
				break
			}
		}
		ds[i].Message = clip(ds[i].Message)
	}
	return ds
}

func (s *state) windowMessage(cause string) string {
	deadline := s.portCheck.FailingSince.Add(s.cfg.PortCheckGrace).UTC().Format(time.RFC3339)
	return fmt.Sprintf("%s; failing since %s, verifying again until %s", cause, s.portCheck.FailingSince.UTC().Format(time.RFC3339), deadline)
}

func (s *state) condemnation() string {
	var names []string
	for _, d := range s.details {
		if d.Port != 0 {
			names = append(names, d.Message)
		}
	}
	return fmt.Sprintf("%s since %s (past the %s grace); roll out a fix to check again", strings.Join(names, "; "),
		s.portCheck.FailingSince.UTC().Format(time.RFC3339), s.cfg.PortCheckGrace)
}

// portFailures is one readiness_failure detail per refused port.
func portFailures(closed []portcheck.PortResult, podName, rev string) []schema.FailureDetail {
	out := make([]schema.FailureDetail, 0, len(closed))
	for _, p := range closed {
		out = append(out, schema.FailureDetail{
			Type: schema.ReadinessFailure, Reason: ReasonPortNotListening, Container: containerName, Port: p.Port, Revision: rev,
			Message: fmt.Sprintf("port %d (%s) refused connection on pod %s: nothing listens there", p.Port, p.Name, podName),
		})
	}
	return out
}

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
