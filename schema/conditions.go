package schema

// ConditionType is the type of a condition a Status carries.
type ConditionType string

// Condition types, in the order status lists them: the four every status
// carries, then ErrorPages for an app that wants the branded error pages
// (public ports, errorPages.enabled, and an install with an error-page
// Service), then Middlewares for an app whose spec names its own Traefik
// Middlewares, then Config for an app whose spec uses ConfigMaps or Secrets
// (files, envFrom, env[].valueFrom).
const (
	CondAvailable   ConditionType = "Available"
	CondConverged   ConditionType = "Converged"
	CondStalled     ConditionType = "Stalled"
	CondReconciling ConditionType = "Reconciling"
	CondErrorPages  ConditionType = "ErrorPages"
	CondMiddlewares ConditionType = "Middlewares"
	CondConfig      ConditionType = "Config"
)

// Reason names the row of the state table (docs/reference.md) a status landed
// on. Every condition carries it, so Stalled and Reconciling always say what
// is going on, True or False.
type Reason string

// Reasons of Available, Converged, Stalled and Reconciling.
const (
	ReasonServing           Reason = "Serving"          // every declared port answered
	ReasonVerifyingPorts    Reason = "VerifyingPorts"   // serving, the verdict is not known yet
	ReasonPortsUnverified   Reason = "PortsUnverified"  // serving, dials were inconclusive
	ReasonPortCheckFailing  Reason = "PortCheckFailing" // serving, a port refused, inside the grace window
	ReasonPortNotListening  Reason = "PortNotListening" // a declared port refused connections
	ReasonProgressing       Reason = "Progressing"      // workload missing, rolling out or booting
	ReasonNotReady          Reason = "NotReady"         // running, not ready past the boot grace
	ReasonCrashLooping      Reason = "CrashLooping"     // a container crashes, is OOMKilled or exits
	ReasonImagePullFailed   Reason = "ImagePullFailed"  // the image cannot be pulled
	ReasonConfigError       Reason = "ContainerConfigError"
	ReasonDeadlineExceeded  Reason = "ProgressDeadlineExceeded"
	ReasonScaledToZero      Reason = "ScaledToZero"
	ReasonInvalidSpec       Reason = "InvalidSpec"
	ReasonUnschedulable     Reason = "Unschedulable"     // a pod of the revision cannot be scheduled
	ReasonCreateFailed      Reason = "CreateFailed"      // the Deployment's ReplicaSet cannot create pods
	ReasonRolloutBlocked    Reason = "RolloutBlocked"    // a StatefulSet rollout waits on a broken pod of the old revision
	ReasonStorageNotApplied Reason = "StorageNotApplied" // the StatefulSet keeps volume claim templates the spec changed
	ReasonChildNotCreated   Reason = "ChildNotCreated"   // a child stackdome returns is still not observed past the settle time
)

// Reasons of the ErrorPages condition.
const (
	ReasonWired                 Reason = "Wired"                 // the route's 5xx get the branded pages
	ReasonWiringPending         Reason = "WiringPending"         // the wiring is being created; the route refers to it once observed
	ReasonErrorServiceNotSeen   Reason = "ErrorServiceNotSeen"   // the sync request carries no error-page Service
	ReasonErrorServiceNoAddress Reason = "ErrorServiceNoAddress" // the error-page Service has no ClusterIP to mirror
)

// Reasons of the Middlewares condition.
const (
	ReasonMiddlewaresAttached Reason = "Attached"           // every Middleware of spec.middlewares exists and the routes use it
	ReasonMiddlewareNotFound  Reason = "MiddlewareNotFound" // one of spec.middlewares does not exist; the routes serve without it
)

// Reasons of the Config condition.
const (
	ReasonConfigFound    Reason = "Found"          // every ConfigMap and Secret the spec uses (and does not mark optional) exists
	ReasonConfigNotFound Reason = "ConfigNotFound" // one the spec uses does not exist; the pods cannot start until it does
	ReasonNotWatched     Reason = "NotWatched"     // the install relates no Secrets (ConfigMaps): whether one exists is not checked, and a change of its content does not roll the pods
)
