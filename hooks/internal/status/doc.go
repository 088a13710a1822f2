// Package status decides the status of a StackResource: where one sync
// lands in the state table of docs/reference.md, rendered as the conditions
// (Available, Converged, Stalled, Reconciling; ErrorPages, Middlewares and
// Config where the spec asks for them), the failure details, the port table
// and the port gate's memory, and the dials the port verifier owes. It
// builds no child and performs no I/O: it reads a request as observed
// decoded it, a read-only view of the verifier (Verdicts) and a time it is
// given.
//
// Its model: the facts of one sync are read once (facts.go) and the state
// table is one ordered list of rules (table.go), the first that fires
// deciding, each a small check returning a whole row and changing nothing
// another reads; a few rows then amend the decided one. The rows live by
// stage: crash.go the pods that crash, start.go those that cannot start,
// rollout.go the rows before the app serves, gate.go the serving rows (the
// grace window, condemnation), children.go the children not created, run.go
// the tables of a Job and a CronJob (runcrash.go what a run says of itself);
// revision.go says which pods the status speaks of, evidence.go which
// verdict a row reads (this replica's own, or the one the status was built
// from, which every replica shares) and dial.go the dials it owes. decide.go
// renders the row as a status: porttable.go the port table, pages.go,
// middlewares.go and config.go one condition each beside the four,
// conditions.go and stamp.go every timestamp, which changes only when the
// fact it stamps changes. write.go states which facts write: a status fed
// back gives the same status (equal.go compares two as the API server stores
// them). invalid.go is the row of an invalid spec.
package status
