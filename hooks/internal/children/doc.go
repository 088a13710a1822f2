// Package children is what stackdome builds for a StackResource: the
// workload (a Deployment, or a StatefulSet with its claim template), its
// Services, its autoscaler, and the routing children — the IngressRoutes,
// their helper Middlewares and the error wiring (an errors Middleware and a
// mirrored error-page Service and EndpointSlice). It decides no status and
// performs no I/O.
//
// Its model: the children are a pure function of the resource's name, its
// valid, defaulted spec, the claim templates the observed StatefulSet keeps
// (Claims) and, for the routing children, the observed wiring
// (observed.Wiring), so that an unchanged resource gets the same bytes on
// every sync and Metacontroller's 3-way merge updates nothing. Build makes
// the spec's own children, Routing the routing ones, KeepRunning the last
// applied ones of an invalid spec.
//
// One builder style per kind of object: the core kinds (Deployment,
// StatefulSet, Service, EndpointSlice, HorizontalPodAutoscaler) are built
// from their Go types and made canonical (canonical.go: no null, no empty
// object, no status, no creationTimestamp); Traefik's custom resources
// (IngressRoute, Middleware), of which stackdome carries no Go types, are
// built as maps (traefik.go). Every child is a map by the time it leaves.
package children
