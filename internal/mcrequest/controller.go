package mcrequest

import "github.com/stackdome/stackdome/metacontroller"

// Resource is one child resource of the chart's CompositeController
// (chart/templates/compositecontroller.yaml), with the kind its group key
// names.
type Resource struct {
	APIVersion, Resource, Kind string
	Method                     string // updateStrategy.method
}

// Group is the resource's group key in a sync request ("Service.v1").
func (r Resource) Group() string { return metacontroller.GroupKey(r.Kind, r.APIVersion) }

// ChildResources are the chart's child resources at their defaults
// (appDefaults.podMonitor off), in the chart's order.
var ChildResources = []Resource{
	{"v1", "services", "Service", "InPlace"},
	{"apps/v1", "deployments", "Deployment", "InPlace"},
	{"apps/v1", "statefulsets", "StatefulSet", "InPlace"},
	{"traefik.io/v1alpha1", "middlewares", "Middleware", "InPlace"},
	{"traefik.io/v1alpha1", "ingressroutes", "IngressRoute", "InPlace"},
	{"autoscaling/v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", "InPlace"},
	{"discovery.k8s.io/v1", "endpointslices", "EndpointSlice", "InPlace"},
	{"policy/v1", "poddisruptionbudgets", "PodDisruptionBudget", "InPlace"},
	{"networking.k8s.io/v1", "networkpolicies", "NetworkPolicy", "InPlace"},
	{"batch/v1", "jobs", "Job", "OnDelete"},
	{"batch/v1", "cronjobs", "CronJob", "InPlace"},
}

// relatedKinds names the kind of each resource a customize rule may relate.
var relatedKinds = map[string]string{
	"pods": "Pod", "services": "Service", "configmaps": "ConfigMap", "secrets": "Secret",
	"middlewares": "Middleware", "jobs": "Job",
}

// The chart's release as the fixtures install it.
const (
	ReleaseNamespace = "stackdome"
	controllerUID    = "5f0c1d6e-3f1e-4d55-9a3c-2d7e0c9b1a01"
)

// Controller is the chart's CompositeController as the API server stores it
// and Metacontroller sends it, its sync hook at syncVersion ("v1" or "v2";
// the chart registers v2 since 0.2.0) and its customize hook at v2.
func Controller(syncVersion string) Object {
	var children []any
	for _, r := range ChildResources {
		children = append(children, map[string]any{"apiVersion": r.APIVersion, "resource": r.Resource,
			"updateStrategy": map[string]any{"method": r.Method, "statusChecks": map[string]any{}}})
	}
	hook := func(version, path string) map[string]any {
		return map[string]any{"version": version, "webhook": map[string]any{"timeout": "5s", "path": path,
			"service": map[string]any{"name": "stackdome", "namespace": ReleaseNamespace, "port": 8080, "protocol": "http"}}}
	}
	return Object{
		"kind": "CompositeController", "apiVersion": "metacontroller.k8s.io/v1alpha1",
		"metadata": map[string]any{"name": "stackdome", "uid": controllerUID, "resourceVersion": "412", "generation": 1,
			"creationTimestamp": "2026-11-29T10:00:00Z", "labels": map[string]any{"app.kubernetes.io/managed-by": "Helm"}},
		"spec": map[string]any{
			"parentResource":      map[string]any{"apiVersion": "stackdome.io/v1alpha1", "resource": "stackresources"},
			"childResources":      children,
			"hooks":               map[string]any{"sync": hook(syncVersion, "/sync"), "customize": hook("v2", "/customize")},
			"resyncPeriodSeconds": 60,
			"generateSelector":    true,
		},
		"status": map[string]any{},
	}
}
