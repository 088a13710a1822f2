package status

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stackdome/stackdome/schema"
)

// The rows "pods can't start": the Deployment's ReplicaSet is refused when
// creating pods (quota, Pod Security admission), a StatefulSet rollout waits
// on a pod of the old revision that Kubernetes will not replace, or a pod of
// the revision cannot be scheduled. Each names the pod and the cause as the
// API gives them, and none applies while the app serves.

// startFailure is a start_failure detail of the workload revision.
func (f *facts) startFailure(reason, msg string) []schema.FailureDetail {
	return []schema.FailureDetail{{Type: schema.StartFailure, Reason: reason, Message: msg, Revision: f.workloadRev}}
}

// startRow is a row of pods that cannot start: nothing serves, the port
// table and the window stand as they were.
func (f *facts) startRow(v health, details []schema.FailureDetail) row {
	return row{health: v, details: details, ports: f.prev.ports, failingSince: f.prev.failingSince}
}

// createFailed: the Deployment reports ReplicaFailure (its ReplicaSet's pod
// creations are refused). Stalled: the controller retries, but only a human
// — a larger quota, a compliant pod — makes it succeed.
func createFailed(f *facts) (row, bool) {
	w := f.workload
	if w == nil || w.Kind != schema.KindDeployment {
		return row{}, false
	}
	for _, c := range w.Status.Conditions {
		if c.Type == "ReplicaFailure" && c.Status == "True" {
			msg := clip(fmt.Sprintf("Deployment %s cannot create pods: %s", f.name, c.Message))
			reason := c.Reason
			if reason == "" {
				reason = "FailedCreate"
			}
			return f.startRow(health{stalled: true, reason: schema.ReasonCreateFailed, message: msg}, f.startFailure(reason, msg)), true
		}
	}
	return row{}, false
}

// rolloutBlocked: a StatefulSet under podManagementPolicy OrderedReady is
// rolling out (updateRevision differs from currentRevision) and a pod still
// on the old revision is not Ready. The controller waits for every pod to be
// Running and Ready before it replaces the next one, and never replaces the
// broken one itself (Kubernetes' "forced rollback"): deleting it is the way
// on. Stalled.
func rolloutBlocked(f *facts) (row, bool) {
	w := f.workload
	if w == nil || w.Kind != schema.KindStatefulSet || (w.Spec.PodManagementPolicy != "" && w.Spec.PodManagementPolicy != "OrderedReady") {
		return row{}, false
	}
	cur, upd := w.Status.CurrentRevision, w.Status.UpdateRevision
	if cur == "" || upd == "" || cur == upd {
		return row{}, false
	}
	for i := range f.all {
		p := &f.all[i]
		if p.Metadata.Labels[schema.LabelControllerRevisionHash] != cur {
			continue
		}
		if ready, _ := p.Ready(); ready {
			continue
		}
		msg := fmt.Sprintf("pod %s is not Ready on the old revision %s, and under podManagementPolicy OrderedReady StatefulSet %s will not replace it, so its rollout to %s waits: delete it (kubectl delete pod %s -n %s) and it is recreated on the new revision",
			p.Metadata.Name, cur, f.name, upd, p.Metadata.Name, f.namespace)
		return f.startRow(health{stalled: true, reason: schema.ReasonRolloutBlocked, message: msg}, f.startFailure(string(schema.ReasonRolloutBlocked), msg)), true
	}
	return row{}, false
}

// unschedulable: a pod of the revision is Pending with PodScheduled False,
// reason Unschedulable — no node fits, or its PersistentVolumeClaim is not
// bound. Not stalled at first: a cluster autoscaler or a volume provisioner
// may still make room; stalled once it has lasted the boot grace.
func unschedulable(f *facts) (row, bool) {
	for _, p := range f.pods {
		if p.Status.Phase != "" && p.Status.Phase != "Pending" {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type != corev1.PodScheduled || c.Status != corev1.ConditionFalse || c.Reason != corev1.PodReasonUnschedulable {
				continue
			}
			msg := fmt.Sprintf("pod %s cannot be scheduled: %s", p.Metadata.Name, c.Message)
			if c.Message == "" {
				msg = fmt.Sprintf("pod %s cannot be scheduled", p.Metadata.Name)
			}
			stalled := !c.LastTransitionTime.IsZero() && f.now.Sub(c.LastTransitionTime.Time) >= f.cfg.BootGrace
			if !stalled {
				msg += fmt.Sprintf(" (waiting up to %s for room)", f.cfg.BootGrace)
			} else {
				msg += fmt.Sprintf(" (since %s)", c.LastTransitionTime.UTC().Format(time.RFC3339))
			}
			return f.startRow(health{stalled: stalled, reason: schema.ReasonUnschedulable, message: clip(msg)}, f.startFailure(string(schema.ReasonUnschedulable), msg)), true
		}
	}
	return row{}, false
}
