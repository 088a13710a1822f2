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

// finding is one condition as a stage decides it, before it is stamped:
// its type, its status, one reason and one human message. The stages of
// the conditions beside the four of health (ErrorPages, Middlewares,
// Config) each return one, with ok false when the status carries no such
// condition.
type finding struct {
	typ     schema.ConditionType
	status  metav1.ConditionStatus
	reason  schema.Reason
	message string
}

// holds is the condition status of a fact: True when ok, else False.
func holds(ok bool) metav1.ConditionStatus {
	if ok {
		return metav1.ConditionTrue
	}
	return metav1.ConditionFalse
}

// stamper renders the findings of one sync as conditions of the parent's
// generation, each carrying its lastTransitionTime over from prev (the
// parent's conditions) while its status holds, else stamped with the
// transition's time (now, or the fact's: healthAt), so that a status fed
// back gives the same status.
type stamper struct {
	prev       []metav1.Condition
	generation int64
	now        metav1.Time
	at         *metav1.Time // a transition's time when not now (healthAt)
}

// condition is f as a condition, its message clipped: its previous
// lastTransitionTime while its status holds, else the transition's time
// (at, never before the previous transition; now without it).
func (s stamper) condition(f finding) metav1.Condition {
	c := metav1.Condition{Type: string(f.typ), Status: f.status, Reason: string(f.reason), Message: clip(f.message), ObservedGeneration: s.generation, LastTransitionTime: s.now}
	p := find(s.prev, f.typ)
	switch {
	case p != nil && p.Status == f.status && !p.LastTransitionTime.IsZero():
		c.LastTransitionTime = p.LastTransitionTime
	case s.at != nil:
		c.LastTransitionTime = *s.at
		if p != nil && s.at.Before(&p.LastTransitionTime) {
			c.LastTransitionTime = p.LastTransitionTime
		}
	}
	return c
}

// healthAt is health with its transitions stamped at (when the fact was
// observed) instead of now.
func (s stamper) healthAt(h health, at metav1.Time) []metav1.Condition {
	s.at = &at
	return s.health(h)
}

// health renders h as the four conditions, in their fixed order.
func (s stamper) health(h health) []metav1.Condition {
	reconciling := !h.converged && !h.stalled
	of := func(typ schema.ConditionType, ok bool) metav1.Condition {
		return s.condition(finding{typ: typ, status: holds(ok), reason: h.reason, message: h.message})
	}
	return []metav1.Condition{
		of(schema.CondAvailable, h.available),
		of(schema.CondConverged, h.converged),
		of(schema.CondStalled, h.stalled),
		of(schema.CondReconciling, reconciling),
	}
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
