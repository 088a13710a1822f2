package status

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/schema"
)

// Which facts write (docs/design.md, "Which transitions write"):
// Metacontroller writes the status whenever an answer differs from the one
// it holds, and every write triggers a sync, so a status changes only with
// a fact the user can tell apart. Two of its fields are not facts but the
// status's bookkeeping:
//
//   - portCheck.checkedAt, when the dial was made whose verdict the status
//     shows: a recheck that finds what the status says is no news;
//   - the clearing of childrenMissingSince once every child is observed:
//     the first sync of a new object (Metacontroller sends it before
//     creating anything) sets it, and the next one sees the children.
//
// They are written with the next fact, never alone.

// writesFacts returns st, the status decided for this sync, with its
// bookkeeping as prev, the status the request carries, holds it when
// nothing else differs: then the answer is prev itself and nothing is
// written. An anchor kept so is read only if a child goes missing again,
// which is then timed from the first absence, as two absences without a
// write between them are one.
func writesFacts(st, prev schema.Status) schema.Status {
	kept := st
	if st.PortCheck != nil {
		pc := *st.PortCheck
		pc.CheckedAt = nil
		if prev.PortCheck != nil {
			pc.CheckedAt = prev.PortCheck.CheckedAt
		}
		kept.PortCheck = nil
		if pc.CheckedAt != nil || pc.FailingSince != nil {
			kept.PortCheck = &pc
		}
	}
	if kept.ChildrenMissingSince == nil {
		kept.ChildrenMissingSince = prev.ChildrenMissingSince
	}
	if equalStatus(kept, prev) {
		// The bookkeeping prev holds, not kept's: kept's port check is
		// this call's own, and is not returned.
		st.PortCheck, st.ChildrenMissingSince = prev.PortCheck, prev.ChildrenMissingSince
	}
	return st
}

// portCheck is the gate's memory: the workload revision, the open grace
// window (since) and when the dial was made whose verdict the status shows
// (checkedAt); nil when there is neither window nor verdict.
func portCheck(workloadRev string, since *metav1.Time, checkedAt *metav1.MicroTime) *schema.PortCheck {
	if since == nil && checkedAt == nil {
		return nil
	}
	return &schema.PortCheck{Revision: workloadRev, FailingSince: since, CheckedAt: checkedAt}
}

// checkedAt is when the verdict row r was decided from was dialed: this
// replica's own verdict's time, or what the status says (a row read from
// the status's verdict, or from none).
func (f *facts) checkedAt(r row) *metav1.MicroTime {
	if ev := r.evidence; ev != nil && !ev.fromStatus {
		at := metav1.NewMicroTime(ev.res.CheckedAt.UTC().Truncate(time.Microsecond))
		return &at
	}
	return f.prev.checkedAt
}
