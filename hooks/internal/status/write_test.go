package status

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/schema"
)

// TestWritesFacts: the status's bookkeeping (portCheck.checkedAt, the
// clearing of childrenMissingSince) is written with a fact, never alone.
func TestWritesFacts(t *testing.T) {
	at := func(s int) *metav1.MicroTime {
		m := metav1.NewMicroTime(time.Date(2026, 12, 1, 10, 0, s, 0, time.UTC))
		return &m
	}
	since := func(s int) *metav1.Time {
		m := metav1.NewTime(time.Date(2026, 12, 1, 9, 0, s, 0, time.UTC))
		return &m
	}
	serving := []metav1.Condition{{Type: string(schema.CondAvailable), Status: metav1.ConditionTrue, Reason: "Serving"}}
	failing := []metav1.Condition{{Type: string(schema.CondAvailable), Status: metav1.ConditionTrue, Reason: "PortCheckFailing"}}
	status := func(conds []metav1.Condition, pc *schema.PortCheck, missing *metav1.Time) schema.Status {
		return schema.Status{Revision: "r1", Conditions: conds, PortCheck: pc, ChildrenMissingSince: missing}
	}
	checked := func(s int) *schema.PortCheck { return &schema.PortCheck{Revision: "w1", CheckedAt: at(s)} }
	tests := map[string]struct {
		reason   string
		st, prev schema.Status
		wantPrev bool // the answer is prev's bookkeeping, so prev itself
	}{
		"a recheck that agrees": {
			reason: "a newer dial saying what the status says writes nothing",
			st:     status(serving, checked(30), nil), prev: status(serving, checked(10), nil), wantPrev: true,
		},
		"a recheck that changes a fact": {
			reason: "the dial's time goes with the fact it changed",
			st:     status(failing, checked(30), nil), prev: status(serving, checked(10), nil),
		},
		"a window opening": {
			reason: "failingSince is a fact: written with the dial's time",
			st:     status(serving, &schema.PortCheck{Revision: "w1", CheckedAt: at(30), FailingSince: since(0)}, nil),
			prev:   status(serving, checked(10), nil),
		},
		"the children appear": {
			reason: "clearing the anchor alone is not worth a write",
			st:     status(serving, checked(10), nil), prev: status(serving, checked(10), since(5)), wantPrev: true,
		},
		"the children appear with an agreeing recheck": {
			reason: "two kinds of bookkeeping together still write nothing",
			st:     status(serving, checked(30), nil), prev: status(serving, checked(10), since(5)), wantPrev: true,
		},
		"the children appear as the app serves": {
			reason: "the anchor is cleared with the fact written",
			st:     status(serving, checked(30), nil), prev: status(failing, checked(10), since(5)),
		},
		"a child goes missing": {
			reason: "setting the anchor is written: the settle time runs from it",
			st:     status(serving, checked(10), since(40)), prev: status(serving, checked(10), nil),
		},
		"a new revision": {
			reason: "a verdict of another workload revision is no bookkeeping of this one",
			st:     status(serving, &schema.PortCheck{Revision: "w2", CheckedAt: at(30)}, nil),
			prev:   status(serving, checked(10), nil),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			want := tc.st
			if tc.wantPrev {
				want = tc.prev
			}
			if diff := cmp.Diff(want, writesFacts(tc.st, tc.prev)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
