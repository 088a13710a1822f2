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

// TestHealthAtStampsTheFact: a transition whose time the row knows (a
// condemnation: the grace's end) is stamped with it (whole seconds), so two
// syncs that decide it from the same parent a few seconds apart — the second
// from a parent whose status write had not reached Metacontroller's cache —
// answer the same status and the second writes nothing; a condition whose
// status holds keeps its time, and a fact time before the condition's
// previous transition, or after now, is not used.
func TestHealthAtStampsTheFact(t *testing.T) {
	before := metav1.NewTime(time.Date(2026, 11, 29, 12, 3, 8, 0, time.UTC))
	dial := metav1.NewTime(time.Date(2026, 11, 29, 12, 3, 10, 241660000, time.UTC))
	prev := []metav1.Condition{
		{Type: string(schema.CondAvailable), Status: metav1.ConditionTrue, LastTransitionTime: before},
		{Type: string(schema.CondConverged), Status: metav1.ConditionFalse, LastTransitionTime: before},
		{Type: string(schema.CondStalled), Status: metav1.ConditionFalse, LastTransitionTime: before},
		{Type: string(schema.CondReconciling), Status: metav1.ConditionTrue, LastTransitionTime: before},
	}
	condemned := health{stalled: true, reason: schema.ReasonPortNotListening, message: "port 9090 refused"}
	at := func(now time.Duration, fact *metav1.Time) []metav1.Condition {
		n := metav1.NewTime(dial.Truncate(time.Second).Add(now))
		return stamper{prev: prev, generation: 1, now: n}.healthAt(condemned, factTime(fact, n))
	}
	first, second := at(time.Second, &dial), at(5*time.Second, &dial)
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("the same fact decided 4 s later (-first +second):\n%s", diff)
	}
	want := map[string]metav1.Time{"Available": dial.Rfc3339Copy(), "Converged": before, "Stalled": dial.Rfc3339Copy(), "Reconciling": dial.Rfc3339Copy()}
	for _, c := range first {
		if !c.LastTransitionTime.Equal(&metav1.Time{Time: want[c.Type].Time}) {
			t.Errorf("%s: lastTransitionTime %v, want %v", c.Type, c.LastTransitionTime, want[c.Type])
		}
	}
	early := metav1.NewTime(before.Add(-time.Minute))
	for _, c := range at(time.Second, &early) {
		if c.LastTransitionTime.Before(&before) {
			t.Errorf("%s: stamped %v, before its previous transition %v", c.Type, c.LastTransitionTime, before)
		}
	}
	late := metav1.NewTime(dial.Add(time.Hour))
	if got := factTime(&late, dial); !got.Equal(&dial) {
		t.Errorf("a fact time after now: %v, want now", got)
	}
}
