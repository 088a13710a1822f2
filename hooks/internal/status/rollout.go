package status

import (
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// probe is what the rows before serving know of the ports: the pod they
// dial, the verdict read on it if any, the port table and the dial they ask
// for.
type probe struct {
	rep     *observed.Related
	ev      *evidence
	ports   []schema.PortStatus
	jobs    []DialJob
	requeue bool
}

// probeNotServing dials a running pod of the revision, not-ready first,
// whenever no verdict names it open and fresh: "my app listens on the wrong
// port" is then seen within one requeue. Nor is a verdict fresh that was
// dialed before the pod of an app that served last turned not ready: it
// names the pod as it was while ready, so an app whose port died, its pod
// gone unready, is dialed at once rather than read as rolling out until
// the verdict ages (--port-recheck). A refusal is written at once; an
// all-open verdict only over one the status already holds.
func (f *facts) probeNotServing() probe {
	pr := probe{rep: representative(f.pods, false), ports: f.prev.ports}
	if pr.rep == nil || len(f.spec.Ports) == 0 {
		return pr
	}
	want := dialAgain
	if ev, ok := f.evidenceFor(pr.rep); ok {
		pr.ev, pr.ports = &ev, portsOf(ev.res)
		if ev.res.AllOpen() && !ev.res.Stale && !(f.prev.served && dialedBeforeReadiness(ev.res, pr.rep, f.now.Time)) {
			want = noRedial
		}
	}
	pr.jobs, pr.requeue = f.dialsFor(pr.rep, pr.ev, want)
	if ev := pr.ev; ev != nil && !ev.fromStatus && ev.res.AllOpen() && f.prev.verdict == nil {
		// Every port open on a pod not serving yet, and the status holds
		// no verdict of the revision: not written. The app is still
		// progressing; written now, the verdict would be one status write
		// more per new app, and it is written with the serving row it
		// decides. Not written either past the boot grace (NotReady): a
		// replica that has no verdict must answer the same rows.
		pr.ev, pr.ports = nil, f.prev.ports
	}
	return pr
}

// closed reports whether the probe's verdict proves a declared port closed.
func (pr probe) closed() bool { return pr.ev != nil && len(pr.ev.res.ClosedPorts()) > 0 }

// base is a row before serving: the probe's port table, dials and verdict,
// and the window as it was.
func (f *facts) base(pr probe, v health) row {
	return row{health: v, ports: pr.ports, failingSince: f.prev.failingSince, evidence: pr.ev, jobs: pr.jobs, requeue: pr.requeue}
}

// provisionalClosed is the row "running, not ready, a declared port proven
// closed": not believed enough to stall, but named at once.
func provisionalClosed(f *facts) (row, bool) {
	pr := f.readProbe()
	if !pr.closed() {
		return row{}, false
	}
	r := f.base(pr, health{reason: schema.ReasonPortNotListening, message: "provisional: pod " + pr.rep.Metadata.Name + " is not ready and " + pr.ev.res.Message()})
	r.details = portFailures(pr.ev.res.ClosedPorts(), pr.rep.Metadata.Name, f.workloadRev)
	return r, true
}

// deadlineExceeded is the row of a Deployment whose rollout passed its
// progress deadline: a human must act.
func deadlineExceeded(f *facts) (row, bool) {
	w := f.workload
	if w == nil || w.Kind == schema.KindStatefulSet {
		return row{}, false
	}
	for _, c := range w.Status.Conditions {
		if c.Type == "Progressing" && c.Status == "False" && c.Reason == string(schema.ReasonDeadlineExceeded) {
			return f.base(f.readProbe(), health{stalled: true, reason: schema.ReasonDeadlineExceeded,
				message: clip("Deployment " + f.name + ": " + c.Message)}), true
		}
	}
	return row{}, false
}

// notReady is the row of a pod running but not ready past the boot grace,
// with no proof of a closed port.
func notReady(f *facts) (row, bool) {
	pr := f.readProbe()
	if pr.rep == nil {
		return row{}, false
	}
	if ready, _ := pr.rep.Ready(); ready {
		return row{}, false
	}
	since := notReadySince(pr.rep)
	if f.now.Sub(since.Time) < f.cfg.BootGrace {
		return row{}, false
	}
	msg := fmt.Sprintf("pod %s has been running but not ready since %s", pr.rep.Metadata.Name, since.UTC().Format(time.RFC3339))
	r := f.base(pr, health{reason: schema.ReasonNotReady, message: msg})
	r.details = []schema.FailureDetail{{Type: schema.ReadinessFailure, Reason: string(schema.ReasonNotReady), Message: msg, Container: schema.ContainerName, Revision: f.workloadRev}}
	return r, true
}

// progressing is the row "workload missing / rolling out": the revision
// the workload rolls out, to how many replicas. The table's last row: it
// always fires.
func progressing(f *facts) (row, bool) {
	return f.base(f.readProbe(), health{reason: schema.ReasonProgressing,
		message: rollout(f.spec.WorkloadKind(), f.name, f.namespace, f.specRev, f.replicas())}), true
}

// rollout says what the app is waiting for: its workload to roll out the
// revision. It names no count and no sub-step (created, generation
// observed, n of m replicas updated or ready): each of those changes within
// seconds of a normal rollout, and every change of the message is a status
// write Metacontroller makes at its client rate, for a fact the workload's
// own status already shows (kubectl rollout status). A workload that does
// not come, or does not progress, has its own rows (ChildNotCreated,
// ProgressDeadlineExceeded, NotReady, Unschedulable, crashes).
func rollout(kind, name, namespace, specRev string, replicas int32) string {
	unit := "replicas"
	if replicas == 1 {
		unit = "replica"
	}
	return fmt.Sprintf("%s %s rolling out revision %s to %d %s (kubectl rollout status %s/%s -n %s shows its progress)",
		kind, name, specRev, replicas, unit, strings.ToLower(kind), name, namespace)
}

// representative picks the pod whose ports are dialed: a Running pod of the
// current revision with an IP, Ready when serving; otherwise a not-ready one
// first, the likelier to explain why the app is not serving.
func representative(current []*observed.Related, serving bool) *observed.Related {
	var fallback *observed.Related
	for _, p := range current {
		if p.Status.Phase != "Running" || p.Status.PodIP == "" {
			continue
		}
		ready, _ := p.Ready()
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
func notReadySince(p *observed.Related) metav1.Time {
	if ready, t := p.Ready(); !ready && !t.IsZero() {
		return t
	}
	if p.Status.StartTime != nil {
		return *p.Status.StartTime
	}
	return metav1.Time{}
}
