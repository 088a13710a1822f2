package status

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/portcheck"
)

// TestDialedBeforeReadiness: a verdict dialed before the pod's Ready
// condition last changed, or within that second, names the pod as it was;
// one dialed after does not; a pod without the condition, or with a time
// after now, dates nothing.
func TestDialedBeforeReadiness(t *testing.T) {
	now := time.Date(2026, 12, 5, 12, 0, 0, 0, time.UTC)
	pod := func(changed time.Time) *observed.Related {
		var p observed.Related
		if !changed.IsZero() {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(changed)}}
		}
		return &p
	}
	for _, c := range []struct {
		name            string
		dialed, changed time.Time
		want            bool
	}{
		{"dialed a minute before", now.Add(-2 * time.Minute), now.Add(-time.Minute), true},
		{"dialed within the second", now.Add(-time.Minute + 500*time.Millisecond), now.Add(-time.Minute), true},
		{"dialed after", now.Add(-time.Minute + 1500*time.Millisecond), now.Add(-time.Minute), false},
		{"no Ready condition", now.Add(-time.Hour), time.Time{}, false},
		{"a time after now", now.Add(-time.Second), now.Add(time.Hour), false},
	} {
		if got := dialedBeforeReadiness(portcheck.Result{CheckedAt: c.dialed}, pod(c.changed), now); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
