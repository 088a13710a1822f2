package status

import (
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/schema"
)

// The bounds of every status this package returns (docs/reference.md, "The
// status" under "Bounds"): etcd refuses an object over 1.5 MiB, and a status that cannot be
// written goes stale. A status decided here is within them by construction
// (a valid spec has at most schema.MaxPorts ports); bound also holds them
// for what is carried over from the request's own status, which a forged
// request or an older stackdome may have made arbitrarily large.
const (
	// maxMessage bounds condition, port and detail messages: they end up in
	// events, kubectl output and the CRD's 32 KiB limit.
	maxMessage = 1024
	// maxReason is the CRD's maxLength of a condition reason.
	maxReason = 1024
	// maxDetails bounds status.lastFailureDetails: one per closed port at
	// most, plus the containers' own.
	maxDetails = schema.MaxPorts + 8
	// maxShort bounds the other strings carried over (revision, url, port
	// and condition names): a DNS name and a scheme fit.
	maxShort = 320
)

// clipTo cuts s to at most max bytes, ending in "..." when cut, and never
// inside a UTF-8 sequence (a cut rune would come out of JSON as U+FFFD).
func clipTo(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - 3
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

func clip(s string) string { return clipTo(s, maxMessage) }

// bound returns st held to the bounds above: at most schema.MaxPorts port
// rows and maxDetails details, every message clipped to maxMessage, every
// other string to its bound. It copies what it changes and never modifies
// st's slices.
func bound(st schema.Status) schema.Status {
	st.Revision, st.URL = clipTo(st.Revision, maxShort), clipTo(st.URL, maxShort)
	if len(st.Ports) > schema.MaxPorts {
		st.Ports = st.Ports[:schema.MaxPorts]
	}
	st.Ports = mapCopy(st.Ports, func(p schema.PortStatus) schema.PortStatus {
		p.Name, p.Message = clipTo(p.Name, maxShort), clip(p.Message)
		return p
	})
	if len(st.LastFailureDetails) > maxDetails {
		st.LastFailureDetails = st.LastFailureDetails[:maxDetails]
	}
	st.LastFailureDetails = mapCopy(st.LastFailureDetails, func(d schema.FailureDetail) schema.FailureDetail {
		d.Message, d.Reason = clip(d.Message), clipTo(d.Reason, maxReason)
		d.Container, d.Revision = clipTo(d.Container, maxShort), clipTo(d.Revision, maxShort)
		return d
	})
	if st.PortCheck != nil {
		pc := *st.PortCheck
		pc.Revision = clipTo(pc.Revision, maxShort)
		st.PortCheck = &pc
	}
	st.Conditions = mapCopy(st.Conditions, func(c metav1.Condition) metav1.Condition {
		c.Message, c.Reason, c.Type = clip(c.Message), clipTo(c.Reason, maxReason), clipTo(c.Type, maxShort)
		return c
	})
	return st
}

// mapCopy returns f applied to each element of s in a new slice, or s
// itself when f changes nothing (so that a bounded status shares its
// slices, and allocates nothing, in the common case). nil stays nil.
func mapCopy[T comparable](s []T, f func(T) T) []T {
	for i, v := range s {
		if w := f(v); w != v {
			out := make([]T, len(s))
			copy(out, s[:i])
			out[i] = w
			for j := i + 1; j < len(s); j++ {
				out[j] = f(s[j])
			}
			return out
		}
	}
	return s
}
