// Package status decides the status of a StackResource: where one sync
// lands in the state table of docs/design.md, rendered as the conditions
// (Available, Converged, Stalled, Reconciling; ErrorPages, Middlewares and
// Config where the spec asks for them), the failure details, the port table and
// the port gate's memory, and the dials the port verifier owes. It builds no
// child and performs no I/O: it reads a request as observed decoded it, a
// read-only view of the verifier (Verdicts) and a time it is given.
//
// Its model: the facts of one sync are given in one value (Input) and read
// once (decide.go), never changed; the state table is walked row by row, most specific cause first,
// and every row is a small constructor returning a whole row, none changing
// what another reads. The stages each have a file: revision.go says which
// pods the status speaks of; crash.go and start.go are the rows of pods that
// crash or cannot start; rollout.go the rows before the app serves; gate.go
// the serving rows (the grace window, condemnation); evidence.go which
// verdict a row reads — this replica's own, or the one the status was built
// from, which every replica shares — and dial.go the dials it owes;
// porttable.go the port table; pages.go, middlewares.go and config.go each
// decide one condition beside the four as a finding, and conditions.go
// stamps every condition of a sync alike;
// invalid.go the row of an invalid spec. Every timestamp changes only when
// the fact it stamps changes, so a status fed back gives the same status
// (equal.go compares two as the API server stores them).
package status
