package status

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/portcheck"
	"github.com/stackdome/stackdome/schema"
)

// Every replica of stackdome has its own verifier, and any of them may
// answer any sync. The status is the memory they share: the verdict it was
// built from (its port table, stamped with portCheck.checkedAt) counts as a
// verdict of its own. A replica reads whichever is newer — its own verdict on
// the pod, or the status's — so a replica that knows nothing (restarted,
// fresh, its cache evicted) answers exactly what the status says, and only a
// verdict dialed later than the status's can change it.

// carried is what the previous status says about the current spec and
// workload revision; a new revision of either starts from nothing.
type carried struct {
	details      []schema.FailureDetail
	ports        []schema.PortStatus
	failingSince *metav1.Time      // the open grace window
	checkedAt    *metav1.MicroTime // when the status's verdict was dialed
	verdict      *portcheck.Result // the status's verdict, as a verdict; dialed at the zero time if written before checkedAt existed
	condemned    bool              // the status condemned this workload revision
	served       bool              // the status read Available=True from a verdict: the app served
}

// verdictReasons are the Available reasons of a status built from a verdict.
var verdictReasons = map[string]bool{
	string(schema.ReasonServing): true, string(schema.ReasonPortCheckFailing): true,
	string(schema.ReasonPortsUnverified): true, string(schema.ReasonPortNotListening): true,
}

// carry reads what the previous status knew of spec revision specRev and
// workload revision workloadRev.
func carry(prev schema.Status, specRev, workloadRev string) carried {
	var c carried
	if prev.Revision != specRev {
		return c // a new spec resets the window, the verdicts and the port table
	}
	pc := prev.PortCheck
	// A status written before checkedAt existed keyed its window by the spec
	// revision; it is read as belonging to the pods running now.
	legacy := pc == nil || pc.CheckedAt == nil
	switch {
	case pc != nil && pc.Revision == workloadRev:
	case pc != nil && legacy && pc.Revision == specRev:
	case pc == nil && legacy:
	default:
		return c // a new workload revision (a rollout restart) verifies from scratch
	}
	for _, d := range prev.LastFailureDetails {
		if d.Revision == workloadRev || d.Revision == specRev {
			c.details = append(c.details, d)
		}
	}
	c.ports = prev.Ports
	if pc != nil {
		c.failingSince, c.checkedAt = pc.FailingSince, pc.CheckedAt
	}
	avail := find(prev.Conditions, schema.CondAvailable)
	fromVerdict := c.checkedAt != nil || (avail != nil && verdictReasons[avail.Reason] && len(prev.Ports) > 0)
	if fromVerdict {
		res := portcheck.Result{}
		if c.checkedAt != nil {
			res.CheckedAt = c.checkedAt.Time
		}
		for _, p := range prev.Ports {
			res.Ports = append(res.Ports, portcheck.PortResult{Name: p.Name, Port: p.Port, Err: p.Message, State: dialState(p.State)})
		}
		c.verdict = &res
	}
	c.served = fromVerdict && avail != nil && avail.Status == metav1.ConditionTrue
	if s := find(prev.Conditions, schema.CondStalled); s != nil && s.Status == metav1.ConditionTrue && s.Reason == string(schema.ReasonPortNotListening) && pc != nil {
		c.condemned = true
	}
	return c
}

// of returns the carried details of type t, as a new slice, each of
// workload revision workloadRev (a detail written before details named the
// workload revision is read as one of the pods running now).
func (c carried) of(t schema.FailureType, workloadRev string) []schema.FailureDetail {
	var out []schema.FailureDetail
	for _, d := range c.details {
		if d.Type == t {
			d.Revision = workloadRev
			out = append(out, d)
		}
	}
	return out
}

// evidence is the verdict a row is decided from.
type evidence struct {
	res        portcheck.Result
	fromStatus bool // the status's own health: this replica has none newer
	ownOlder   bool // this replica holds a verdict older than the status's
}

// evidenceFor returns the newest verdict on the pod: this replica's own
// (about this pod's IP) or the status's, and false when there is neither.
func (f *facts) evidenceFor(rep *observed.Related) (evidence, bool) {
	own, ownOK := f.verdicts.Get(f.key())
	ownOK = ownOK && own.IP == rep.Status.PodIP
	st := f.prev.verdict
	switch {
	case ownOK && (st == nil || !micro(own.CheckedAt).Before(st.CheckedAt)):
		return evidence{res: own}, true
	case st != nil:
		return evidence{res: *st, fromStatus: true, ownOlder: ownOK}, true
	}
	return evidence{}, false
}

// dialedBeforeReadiness says whether res was dialed before pod's Ready
// condition last changed: it names the pod as it was then. The condition's
// time has seconds only, so a dial within that second counts as before. It
// is the node's clock: a time after now (a node's clock ahead of this
// replica's, or a pod status written by hand) dates no verdict, so it can
// never hold a condemnation back, or ask for dials, for as long as it says.
func dialedBeforeReadiness(res portcheck.Result, pod *observed.Related, now time.Time) bool {
	_, t := pod.Ready()
	if t.IsZero() || t.After(now) {
		return false
	}
	return res.CheckedAt.Before(t.Add(time.Second))
}

// micro is t as status stores it: microseconds, UTC.
func micro(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// redial says what a row wants dialed after reading a verdict.
type redial int

const (
	noRedial      redial = iota // the verdict stands
	dialAgain                   // dial again; the verdict counts meanwhile
	forgetAndDial               // drop the verdict, dial again: it must not be read twice
)

// dialsFor returns the dials a row owes the pod after reading ev with the
// wish want, and whether an answer can arrive. A row read from the status's
// verdict always dials: this replica has nothing of its own (or only older),
// and its own answer is what may move the status on.
func (f *facts) dialsFor(rep *observed.Related, ev *evidence, want redial) ([]DialJob, bool) {
	switch {
	case ev == nil:
		return f.dial(rep, false), true
	case ev.fromStatus:
		// The status's verdict is in no cache; only an older one of this
		// replica's own must go.
		return f.dial(rep, ev.ownOlder), true
	case want == noRedial:
		return nil, false
	}
	return f.dial(rep, want == forgetAndDial), true
}
