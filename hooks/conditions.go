package hooks

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConditionType is the type of one of the four conditions every status
// carries.
type ConditionType string

// Condition types, in the order status lists them.
const (
	CondAvailable   ConditionType = "Available"
	CondConverged   ConditionType = "Converged"
	CondStalled     ConditionType = "Stalled"
	CondReconciling ConditionType = "Reconciling"
)

// Reason names the row of the state table (docs/design.md) a status landed
// on. Every condition carries it, so Stalled and Reconciling always say what
// is going on, True or False.
type Reason string

// Reasons.
const (
	ReasonServing           Reason = "Serving"          // every declared port answered
	ReasonVerifyingPorts    Reason = "VerifyingPorts"   // serving, the verdict is not known yet
	ReasonPortsUnverified   Reason = "PortsUnverified"  // serving, dials were inconclusive
	ReasonPortCheckFailing  Reason = "PortCheckFailing" // serving, a port refused, inside the grace window
	ReasonPortNotListening  Reason = "PortNotListening" // a declared port refused connections
	ReasonProgressing       Reason = "Progressing"      // workload missing, rolling out or booting
	ReasonNotReady          Reason = "NotReady"         // running, not ready past the boot grace
	ReasonCrashLooping      Reason = "CrashLooping"     // a container crashes, is OOMKilled or exits
	ReasonImagePullFailed   Reason = "ImagePullFailed"  // the image cannot be pulled
	ReasonConfigError       Reason = "ContainerConfigError"
	ReasonDeadlineExceeded  Reason = "ProgressDeadlineExceeded"
	ReasonScaledToZero      Reason = "ScaledToZero"
	ReasonInvalidSpec       Reason = "InvalidSpec"
	ReasonUnschedulable     Reason = "Unschedulable"     // a pod of the revision cannot be scheduled
	ReasonCreateFailed      Reason = "CreateFailed"      // the Deployment's ReplicaSet cannot create pods
	ReasonRolloutBlocked    Reason = "RolloutBlocked"    // a StatefulSet rollout waits on a broken pod of the old revision
	ReasonStorageNotApplied Reason = "StorageNotApplied" // the StatefulSet keeps volume claim templates the spec changed
)

// verdict is where the state table lands for one sync: whether the app is
// available, converged or stalled, and the one reason and message that say why.
type verdict struct {
	available bool
	converged bool
	stalled   bool
	reason    Reason
	message   string
}

// maxMessage bounds condition and detail messages: they end up in events,
// kubectl output and the CRD's 32 KiB limit.
const maxMessage = 1024

func clip(s string) string {
	if len(s) <= maxMessage {
		return s
	}
	return s[:maxMessage-3] + "..."
}

// conditions renders a verdict as the four conditions, carrying each
// lastTransitionTime over from prev while the condition's status holds, so
// that a status fed back gives the same status.
func conditions(v verdict, prev []metav1.Condition, generation int64, now metav1.Time) []metav1.Condition {
	reconciling := !v.converged && !v.stalled
	msg := clip(v.message)
	return []metav1.Condition{
		condition(prev, CondAvailable, v.available, v.reason, msg, generation, now),
		condition(prev, CondConverged, v.converged, v.reason, msg, generation, now),
		condition(prev, CondStalled, v.stalled, v.reason, msg, generation, now),
		condition(prev, CondReconciling, reconciling, v.reason, msg, generation, now),
	}
}

func condition(prev []metav1.Condition, typ ConditionType, ok bool, reason Reason, msg string, generation int64, now metav1.Time) metav1.Condition {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	c := metav1.Condition{Type: string(typ), Status: status, Reason: string(reason), Message: msg, ObservedGeneration: generation, LastTransitionTime: now}
	if p := find(prev, typ); p != nil && p.Status == status && !p.LastTransitionTime.IsZero() {
		c.LastTransitionTime = p.LastTransitionTime
	}
	return c
}

// find returns the condition of type typ in cs, or nil.
func find(cs []metav1.Condition, typ ConditionType) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == string(typ) {
			return &cs[i]
		}
	}
	return nil
}
