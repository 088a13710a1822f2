package observed

import (
	"fmt"
	"sort"

	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/schema"
)

// Observed is everything of a sync request the hook decides from besides
// the parent.
type Observed struct {
	Workload *Child    // the workload the spec asks for; nil when missing
	Pods     []Related // related pods, sorted by name, terminating ones left out
	Wiring   Wiring
	Config   Config // the ConfigMaps and Secrets the spec uses
	// Runs are the Jobs of a type Job (its children) or CronJob (related),
	// oldest first; nil for the serving types.
	Runs []Run
	// Missing are the children the answer returns that the request does
	// not observe (Request.Missing), in answer order. Observe leaves it
	// empty: the pipeline fills it once the children are built.
	Missing []ChildRef
}

// ErrorService names the chart's Service behind the branded error pages.
type ErrorService struct {
	Name      string
	Namespace string
	Port      int32
	// CrossNamespace points each errors Middleware at this Service in its
	// own namespace, as Traefik allows only with
	// providers.kubernetesCRD.allowCrossNamespace=true (off by default: a
	// Traefik with the default drops such a Middleware and disables every
	// route using it). When false, each resource gets a Service of its own
	// namespace whose EndpointSlice holds this Service's ClusterIP
	// (children/wiring.go), related through the customize hook.
	CrossNamespace bool
}

// Group keys of the children and related objects, as Metacontroller sends them.
var (
	groupService       = metacontroller.GroupKey("Service", "v1")
	groupMiddleware    = metacontroller.GroupKey("Middleware", "traefik.io/v1alpha1")
	groupIngressRoute  = metacontroller.GroupKey("IngressRoute", "traefik.io/v1alpha1")
	groupEndpointSlice = metacontroller.GroupKey("EndpointSlice", "discovery.k8s.io/v1")
	groupPod           = metacontroller.GroupKey("Pod", "v1")
)

// Observe reads the workload the parent's spec asks for, the related pods,
// which of the spec's own Middlewares exist, the error wiring (svc names the
// chart's error-page Service), and the ConfigMaps and Secrets the spec uses,
// of the kinds not unrelated. An error is a workload, pod or Job that does
// not decode: the status cannot be decided without them.
func Observe(req *Request, p *Parent, svc ErrorService, unrelated Unrelated) (Observed, error) {
	var o Observed
	name, namespace := p.Metadata.Name, p.Metadata.Namespace
	apiVersion := "apps/v1"
	if p.Spec.RunsToCompletion() {
		apiVersion = "batch/v1"
	}
	group := metacontroller.GroupKey(p.Spec.WorkloadKind(), apiVersion)
	w, _, err := req.child(group, namespace, name)
	if err != nil {
		return o, fmt.Errorf("decoding observed %s %q: %w", group, name, err)
	}
	o.Workload = w
	if o.Pods, err = req.livePods(); err != nil {
		return o, err
	}
	o.Wiring = viewWiring(name, namespace, req.lookup(namespace), req.errorService(svc))
	o.Wiring.First = p.Unanswered()
	o.Wiring.Routes.Middlewares = req.relatedMiddlewares(namespace, p.Spec.MiddlewareNames())
	o.Config = req.config(namespace, p.Spec, unrelated)
	switch p.Spec.Type {
	case schema.TypeJob:
		o.Runs, err = req.jobChildren()
	case schema.TypeCronJob:
		o.Runs, err = req.relatedJobs(namespace)
	}
	return o, err
}

// livePods are the related pods that say something about the app's future,
// sorted by name: terminating ones are left out, and a pod without a name is
// named by its key. A pod that does not decode is an error (the first by
// key, so that the answer does not depend on the map's order).
func (r *Request) livePods() ([]Related, error) {
	pods := r.related[groupPod]
	out := make([]Related, 0, len(pods))
	bad := ""
	for key, o := range pods {
		if o.err != nil {
			if bad == "" || key < bad {
				bad = key
			}
			continue
		}
		pd := o.v
		if pd.Metadata.DeletionTimestamp != nil {
			continue
		}
		if pd.Metadata.Name == "" {
			pd.Metadata.Name = metacontroller.ParseKey(key).Name
		}
		out = append(out, pd)
	}
	if bad != "" {
		return nil, fmt.Errorf("decoding related pod %q: %w", bad, pods[bad].err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Metadata.Name < out[j].Metadata.Name })
	return out, nil
}
