package status

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/schema"
)

// TestStamperCarriesTransitions: a condition whose status holds keeps the
// previous lastTransitionTime, whatever its reason or message now; one
// whose status changed, or that is new, is stamped now; every condition
// carries the parent's generation and a clipped message.
func TestStamperCarriesTransitions(t *testing.T) {
	then := metav1.NewTime(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC))
	now := metav1.NewTime(then.Add(time.Hour))
	prev := []metav1.Condition{
		{Type: string(schema.CondConfig), Status: metav1.ConditionFalse, Reason: "Old", LastTransitionTime: then},
		{Type: string(schema.CondMiddlewares), Status: metav1.ConditionFalse, LastTransitionTime: then},
	}
	s := stamper{prev: prev, generation: 7, now: now}
	long := strings.Repeat("x", maxMessage+10)
	for name, tc := range map[string]struct {
		in   finding
		want metav1.Condition
	}{
		"status holds": {
			in:   finding{typ: schema.CondConfig, status: metav1.ConditionFalse, reason: schema.ReasonConfigNotFound, message: "m"},
			want: metav1.Condition{Type: string(schema.CondConfig), Status: metav1.ConditionFalse, Reason: string(schema.ReasonConfigNotFound), Message: "m", ObservedGeneration: 7, LastTransitionTime: then},
		},
		"status changed": {
			in:   finding{typ: schema.CondMiddlewares, status: metav1.ConditionTrue, reason: schema.ReasonMiddlewaresAttached, message: long},
			want: metav1.Condition{Type: string(schema.CondMiddlewares), Status: metav1.ConditionTrue, Reason: string(schema.ReasonMiddlewaresAttached), Message: clip(long), ObservedGeneration: 7, LastTransitionTime: now},
		},
		"new": {
			in:   finding{typ: schema.CondErrorPages, status: metav1.ConditionFalse, reason: schema.ReasonWiringPending},
			want: metav1.Condition{Type: string(schema.CondErrorPages), Status: metav1.ConditionFalse, Reason: string(schema.ReasonWiringPending), ObservedGeneration: 7, LastTransitionTime: now},
		},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, s.condition(tc.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	got := s.health(health{converged: true, reason: schema.ReasonServing, message: "ok"})
	var types []string
	var statuses []metav1.ConditionStatus
	for _, c := range got {
		types, statuses = append(types, c.Type), append(statuses, c.Status)
	}
	want := []string{string(schema.CondAvailable), string(schema.CondConverged), string(schema.CondStalled), string(schema.CondReconciling)}
	if diff := cmp.Diff(want, types); diff != "" {
		t.Errorf("health's conditions, in order (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]metav1.ConditionStatus{"False", "True", "False", "False"}, statuses); diff != "" {
		t.Errorf("health's statuses (-want +got):\n%s", diff)
	}
}
