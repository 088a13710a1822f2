package status

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/schema"
)

// health is where the state table lands for one sync: whether the app is
// available, converged or stalled, and the one reason and message that say
// why. The four conditions are rendered from it.
type health struct {
	available bool
	converged bool
	stalled   bool
	reason    schema.Reason
	message   string
}

// conditions renders a health as the four conditions, carrying each
// lastTransitionTime over from prev while the condition's status holds, so
// that a status fed back gives the same status.
func conditions(h health, prev []metav1.Condition, generation int64, now metav1.Time) []metav1.Condition {
	reconciling := !h.converged && !h.stalled
	msg := clip(h.message)
	return []metav1.Condition{
		condition(prev, schema.CondAvailable, h.available, h.reason, msg, generation, now),
		condition(prev, schema.CondConverged, h.converged, h.reason, msg, generation, now),
		condition(prev, schema.CondStalled, h.stalled, h.reason, msg, generation, now),
		condition(prev, schema.CondReconciling, reconciling, h.reason, msg, generation, now),
	}
}

func condition(prev []metav1.Condition, typ schema.ConditionType, ok bool, reason schema.Reason, msg string, generation int64, now metav1.Time) metav1.Condition {
	status := metav1.ConditionFalse
	if ok {
		status = metav1.ConditionTrue
	}
	return conditionOf(prev, typ, status, reason, msg, generation, now)
}

// conditionOf is condition with its status given, Unknown included.
func conditionOf(prev []metav1.Condition, typ schema.ConditionType, status metav1.ConditionStatus, reason schema.Reason, msg string, generation int64, now metav1.Time) metav1.Condition {
	c := metav1.Condition{Type: string(typ), Status: status, Reason: string(reason), Message: msg, ObservedGeneration: generation, LastTransitionTime: now}
	if p := find(prev, typ); p != nil && p.Status == status && !p.LastTransitionTime.IsZero() {
		c.LastTransitionTime = p.LastTransitionTime
	}
	return c
}

// find returns the condition of type typ in cs, or nil.
func find(cs []metav1.Condition, typ schema.ConditionType) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == string(typ) {
			return &cs[i]
		}
	}
	return nil
}

// replace puts c in place of the condition of its type in cs; cs must hold
// one.
func replace(cs []metav1.Condition, c metav1.Condition) {
	*find(cs, schema.ConditionType(c.Type)) = c
}
