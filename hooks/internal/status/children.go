package status

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// childrenMissingSince is the settle window's anchor in the new status:
// prev, the status's own, while a child is still missing; now when one
// first is; nil once every child the answer returns is observed. A child
// that was missing and comes back clears it, so each absence is timed on
// its own (two children missing one after the other without a sync that
// sees them both is one absence, timed from the first).
func childrenMissingSince(prev *metav1.Time, missing []observed.ChildRef, now metav1.Time) *metav1.Time {
	if len(missing) == 0 {
		return nil
	}
	if prev != nil && !prev.IsZero() {
		return prev
	}
	return &now
}

// SettleOpen says a child the answer returns that the request does not
// show is still awaited at now, not yet refused: its absence is timed from
// since (the status's childrenMissingSince), or starts now when since is
// unset, and is younger than cfg.ChildSettle. childrenSeen reads it for the
// status; the pipeline hands it to the routes (observed.Wiring.SettleOpen),
// which keep referring to a Middleware in flight and let go of one refused
// at the same sync as the status says so.
func SettleOpen(cfg Config, since *metav1.Time, now metav1.Time) bool {
	if since == nil || since.IsZero() {
		return cfg.ChildSettle > 0
	}
	return now.Sub(since.Time) < cfg.ChildSettle
}

// childrenSeen is the row r once the children the answer returns are looked
// for in the request that came back: Metacontroller creates what a sync
// returns right after the answer, and the next sync request shows it, so a
// child still missing after cfg.ChildSettle (counted from f.missingSince,
// kept on the object) was refused — a ResourceQuota, an admission webhook,
// a full Service IP range, a name taken by an object Metacontroller does
// not own. Metacontroller then logs "can't reconcile children", posts a
// SyncError event on the StackResource and retries; until #25 the status
// read whatever the workload said, Available and Converged included.
//
// Inside the settle time (the first sync of a new resource: nothing
// observed yet) the row is r, with a resync asked for when the time runs
// out. Past it: not Converged, Stalled (as CreateFailed: the cause needs a
// human), reason ChildNotCreated with a message naming each missing child
// and where Metacontroller's events say why; Available only if r is and the
// app still serves: not with its workload missing, nor, for a public app,
// its Service or IngressRoute.
func childrenSeen(f *facts, r row) row {
	missing := f.missing
	if len(missing) == 0 {
		return r
	}
	if SettleOpen(f.cfg, f.missingSince, f.now) {
		r.resyncIn = f.cfg.ChildSettle - f.now.Sub(f.missingSince.Time)
		return r
	}
	r.at = nil // the absence is decided now
	r.health = health{
		available: r.available && !servesWithout(f, missing),
		stalled:   true,
		reason:    schema.ReasonChildNotCreated,
		message:   notCreatedMessage(f, missing),
	}
	return r
}

// servesWithout says the app cannot serve without one of missing: its
// workload, or, when a port is public, the Service or IngressRoute the
// route goes through.
func servesWithout(f *facts, missing []observed.ChildRef) bool {
	public := len(f.spec.PublicPorts()) > 0
	for _, c := range missing {
		switch {
		case c.Name != f.name:
		case c.Kind == "Deployment" || c.Kind == "StatefulSet":
			return true
		case public && (c.Kind == "Service" || c.Kind == "IngressRoute"):
			return true
		}
	}
	return false
}

// notCreatedMessage names the missing children as kubectl does and says
// where the refusal is: Metacontroller's SyncError events on the
// StackResource carry the API server's answer ("can't reconcile children
// for StackResource ns/name: … forbidden: exceeded quota …").
func notCreatedMessage(f *facts, missing []observed.ChildRef) string {
	names := make([]string, len(missing))
	for i, c := range missing {
		names[i] = c.String()
	}
	verb := "was"
	if len(names) > 1 {
		verb = "were"
	}
	return strings.Join(names, ", ") + " " + verb + " not created: not observed for more than " + f.cfg.ChildSettle.String() +
		" after stackdome returned it (a ResourceQuota, an admission webhook, a full Service IP range, or a name taken by an object Metacontroller does not own). " +
		"Metacontroller's SyncError events on the StackResource say why: kubectl describe sr -n " + f.namespace + " " + f.name +
		", or kubectl get events -n " + f.namespace + " --field-selector involvedObject.name=" + f.name + ",reason=SyncError"
}
