package status

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/schema"
)

// equalStatus compares two statuses as the API server stores them (times
// to the second, checkedAt to the microsecond), observedGeneration aside:
// Metacontroller sets it. It runs on every sync a replica reads its own
// verdict in, so it compares field by field rather than encoding both.
func equalStatus(a, b schema.Status) bool {
	return a.Revision == b.Revision && a.URL == b.URL &&
		slices.EqualFunc(a.Conditions, b.Conditions, func(x, y metav1.Condition) bool {
			return x.Type == y.Type && x.Status == y.Status && x.Reason == y.Reason && x.Message == y.Message &&
				x.ObservedGeneration == y.ObservedGeneration && x.LastTransitionTime.Equal(&y.LastTransitionTime)
		}) &&
		slices.EqualFunc(a.LastFailureDetails, b.LastFailureDetails, func(x, y schema.FailureDetail) bool {
			return x.Type == y.Type && x.Reason == y.Reason && x.Message == y.Message && x.Container == y.Container &&
				x.Port == y.Port && x.Revision == y.Revision && equalPtr(x.ExitCode, y.ExitCode) && x.ObservedAt.Equal(y.ObservedAt)
		}) &&
		slices.Equal(a.Ports, b.Ports) && equalPortCheck(a.PortCheck, b.PortCheck) &&
		a.ChildrenMissingSince.Equal(b.ChildrenMissingSince) &&
		equalRun(a.Run, b.Run)
}

func equalPortCheck(a, b *schema.PortCheck) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Revision == b.Revision && a.FailingSince.Equal(b.FailingSince) &&
		(a.CheckedAt == nil) == (b.CheckedAt == nil) && (a.CheckedAt == nil || a.CheckedAt.Equal(b.CheckedAt))
}

func equalPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
