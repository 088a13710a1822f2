package status

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/schema"
)

// Stamp is t as a status keeps a time: whole seconds in UTC, what survives
// a round trip through the API server (metav1.Time is RFC 3339), so a
// status fed back compares equal.
func Stamp(t time.Time) metav1.Time {
	return metav1.NewTime(t.UTC().Truncate(time.Second))
}

// factTime is at as Stamp keeps it, or now when at is unknown or later
// than now.
func factTime(at *metav1.Time, now metav1.Time) metav1.Time {
	if at == nil {
		return now
	}
	t := Stamp(at.Time)
	if now.Before(&t) {
		return now
	}
	return t
}

// observedAt returns ds with each detail's observedAt set — carried over
// from prev when the same failure was already recorded, else now — and its
// message clipped. ds is not changed.
func observedAt(ds, prev []schema.FailureDetail, now metav1.Time) []schema.FailureDetail {
	if ds == nil {
		return nil
	}
	out := make([]schema.FailureDetail, len(ds))
	for i, d := range ds {
		d.ObservedAt = &now
		for _, p := range prev {
			if p.ObservedAt != nil && p.Type == d.Type && p.Reason == d.Reason && p.Container == d.Container &&
				p.Port == d.Port {
				d.ObservedAt = p.ObservedAt
				break
			}
		}
		d.Message = clip(d.Message)
		out[i] = d
	}
	return out
}
