// Package hooks answers Metacontroller's sync and customize hooks for
// StackResources. Sync and Customize are pure: they read a request, a
// read-only view of the port verifier and a clock value, and return the
// answer and the dials to schedule; only the HTTP handlers touch the
// verifier. Its invariant: a 200 answer always carries every child that
// should exist, because what it leaves out Metacontroller deletes.
//
// This package is the public face and the one pipeline (sync.go): decode →
// observe → children → status → answer. What each stage knows lives in its
// own package under internal/, and the compiler keeps them apart:
// observed (what the request says), children (what is built) and status
// (how health is decided); children and status never import each other, and
// none of them imports net/http. The handler (handler.go) only glues: a
// size-limited read, the pipeline, the dials it returns scheduled, the
// answer written, and the HTTP status code chosen from the error's kind.
package hooks
