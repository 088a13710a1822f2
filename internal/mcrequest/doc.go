// Package mcrequest builds the requests Metacontroller v4.17.2 sends to the
// chart's CompositeController hooks, from typed or unstructured objects: the
// controller as the chart registers it, every child group present even when
// empty, children and related objects keyed namespace/name (hook version v2)
// or name (v1), related objects selected by the customize hook's own rules,
// and each child as the API server stores it after Metacontroller applied it
// (the last-applied annotation, owner reference, managedFields and the
// server's defaults, stated once in defaults.go). A parent's spec is held to
// what the API server stores of it (Stored, by schema.AsStored). It is the
// one Metacontroller stand-in of the fixture generator, the hooks' tests
// (their scenarios and gate tests), the bench and the e2e; it performs no
// I/O and imports no hook code: the caller passes the hook's answers in, and
// reads them back with Objects, Find and Revision.
package mcrequest
