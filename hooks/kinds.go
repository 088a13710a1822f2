package hooks

// ChildResource is a kind Sync may return, as a CompositeController's
// childResources lists it.
type ChildResource struct {
	APIVersion, Resource, Kind string
}

// ChildResources are every kind Sync can return. Metacontroller only
// watches, updates and deletes the kinds its CompositeController lists, so the
// chart registers exactly these (a chart test checks it).
var ChildResources = []ChildResource{
	{APIVersion: "v1", Resource: "services", Kind: "Service"},
	{APIVersion: "apps/v1", Resource: "deployments", Kind: "Deployment"},
	{APIVersion: "apps/v1", Resource: "statefulsets", Kind: "StatefulSet"},
	{APIVersion: "traefik.io/v1alpha1", Resource: "middlewares", Kind: "Middleware"},
	{APIVersion: "traefik.io/v1alpha1", Resource: "ingressroutes", Kind: "IngressRoute"},
	{APIVersion: "autoscaling/v2", Resource: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler"},
	{APIVersion: "discovery.k8s.io/v1", Resource: "endpointslices", Kind: "EndpointSlice"},
	{APIVersion: "policy/v1", Resource: "poddisruptionbudgets", Kind: "PodDisruptionBudget"},
	{APIVersion: "networking.k8s.io/v1", Resource: "networkpolicies", Kind: "NetworkPolicy"},
	{APIVersion: "batch/v1", Resource: "jobs", Kind: "Job"},
	{APIVersion: "batch/v1", Resource: "cronjobs", Kind: "CronJob"},
}

// OptionalChildResources are the kinds Sync returns only when the platform
// turns them on (Config.PodMonitors): the chart lists each only then, since
// Metacontroller refuses a CompositeController whose child kind the cluster
// does not serve.
var OptionalChildResources = []ChildResource{
	{APIVersion: "monitoring.coreos.com/v1", Resource: "podmonitors", Kind: "PodMonitor"},
}
