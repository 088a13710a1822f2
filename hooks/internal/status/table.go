package status

// The state table of docs/reference.md ("The state table") as code, in the
// manner of cert-manager's policies.Chain: one ordered list of small checks,
// the first that fires decides. Each rule names its row as the table's
// "situation" column does (TestTableMatchesDesign holds the two equal), so
// changing a row is changing one rule here and the function it names.
//
// A rule applies while the app serves, while it does not, or always, as its
// situation opens ("serving, …", "not serving, …"). Its check reads the
// facts of the sync and returns its whole row, or false; it never changes
// what another check reads. A check may count on its rule applying and on
// every rule above it not having fired (serving with no port declared is
// ruled out below "serving, no ports declared"), and on nothing else.

// rule is one row of the state table: the situation it decides, in the
// table's words, when it applies, and the check that returns the row when
// it holds.
type rule struct {
	situation string
	applies   func(f *facts) bool
	check     func(f *facts) (row, bool)
}

// When a rule applies: always, while the workload serves the spec revision
// with every replica ready (facts.serving), or while it does not.
func always(*facts) bool       { return true }
func serving(f *facts) bool    { return f.serving }
func notServing(f *facts) bool { return !f.serving }

// chain is rules checked in order; the first that fires decides. Its last
// rule always fires.
type chain []rule

// decide returns the row of the first rule of c that fires for f.
func (c chain) decide(f *facts) row {
	for _, r := range c {
		if !r.applies(f) {
			continue
		}
		if out, ok := r.check(f); ok {
			return out
		}
	}
	panic("status: no row of the state table fired: its last rule must always fire")
}

// servingTable is the state table of the serving types (Deployment and
// StatefulSet), row for row. The row "spec invalid" comes before it
// (Invalid: the hook never decides from an invalid spec), and the
// amendments after it.
var servingTable = chain{
	{"a current pod's container crash-loops, was OOMKilled, exits non-zero, or cannot start", always, crashing},
	{"not serving and a runtime_crash of this workload revision was recorded", notServing, crashKept},
	{"not serving, the Deployment reports ReplicaFailure (quota, Pod Security admission refuse its pods)", notServing, createFailed},
	{"not serving, StatefulSet (OrderedReady) rolling out, a pod on the old revision not Ready: Kubernetes will not replace it", notServing, rolloutBlocked},
	{"not serving, a current pod Pending with PodScheduled=False Unschedulable (no node fits, unbound claim)", notServing, unschedulable},
	{"scaled to zero", always, scaledToZero},
	{"serving, no ports declared", serving, servingNoPorts},
	{"serving, condemned before for this workload revision", serving, condemnedKept},
	{"serving, no verdict at all", serving, verifying},
	{"serving, every port Open", serving, servingOpen},
	{"serving, a port Closed by a dial made after failingSince + grace and after the pod turned ready", serving, condemned},
	{"serving, a port Closed by a dial made inside the window or before the pod turned ready, the window past grace (deciding)", serving, deciding},
	{"serving, a port Closed, window not past grace", serving, windowOpen},
	{"serving, only Inconclusive", serving, unverified},
	{"not serving, a running current pod, a port Closed", notServing, provisionalClosed},
	{"not serving, Deployment ProgressDeadlineExceeded", notServing, deadlineExceeded},
	{"not serving, a running pod not ready for ≥ boot grace (5m)", notServing, notReady},
	{"workload missing, rolling out, or booting", always, progressing},
}

// amendment is a row of the table that applies after another decided
// ("after the row above decided"): it returns the decided row, amended
// when its situation holds.
type amendment struct {
	situation string
	amend     func(f *facts, r row) row
}

// amendments are applied in order to the row the table decided, unless it
// is held (the row "deciding" answers nothing).
var amendments = []amendment{
	{"a Converged row above (serving, scaled to zero) while the StatefulSet keeps claim templates the spec changed", storageNotApplied},
	{"a child stackdome returns missing from the request for 30 s (ChildSettle) or more, counted from childrenMissingSince", childrenSeen},
}

// walk decides f's row: the first row of the table that fires, amended.
func (f *facts) walk() row {
	r := servingTable.decide(f)
	if r.held != "" {
		return r
	}
	for _, a := range amendments {
		r = a.amend(f, r)
	}
	return r
}
