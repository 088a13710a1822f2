// Package observed is what a sync request says: the StackResource (Parent),
// each observed child (Child) and each related object (Related), decoded
// into the few fields the hook decides from, and what they show together
// (Observed): the workload, the live pods and the error wiring. It decides
// nothing and builds nothing.
//
// Its model: a request is held in one form (Request), reached through two
// doors. Decode, the server's, walks the body once (walk.go), measuring it
// against its Budget, and decodes each object through a Cache keyed by its
// bytes; FromSyncRequest, Sync's, decodes a request already split into raw
// objects. The input is what Metacontroller sends (decode.go): anything else
// is refused, not read a second way. Either way an object that does not
// decode is missing where the hook can do without it (a routing child, the
// error-page Service's address) and an error where it cannot (the workload, a
// pod). Child and Related are neutral on purpose: one type reads every kind
// of child (a Deployment or StatefulSet, a Service, an IngressRoute, a
// Middleware, an EndpointSlice), one every related object (a Pod, the chart's
// error-page Service), each kind filling the fields it has.
//
// The names of the children are schema's (schema/names.go): the request
// is searched for the children by the names children builds them under.
package observed
