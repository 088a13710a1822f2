package hooks

import (
	"encoding/json"
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/schema"
)

// The observed objects are decoded into the few fields the hook reads, never
// into whole API objects: a sync request carries every related Pod with its
// managedFields, and what is not decoded costs one scan instead of an
// allocation per field.

// meta is the part of ObjectMeta the hook reads.
type meta struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace,omitempty"`
	UID               string            `json:"uid,omitempty"`
	Generation        int64             `json:"generation,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
	CreationTimestamp metav1.Time       `json:"creationTimestamp,omitempty"`
	DeletionTimestamp *metav1.Time      `json:"deletionTimestamp,omitempty"`
}

// parent is the StackResource as the hook reads it.
type parent struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Metadata   meta            `json:"metadata"`
	RawSpec    json.RawMessage `json:"spec"`
	Status     schema.Status   `json:"status"`

	Spec    schema.Spec // decoded from RawSpec when it can be
	SpecErr error       // why RawSpec could not be decoded
}

// workload is a Deployment or StatefulSet as the status logic reads it. The
// one-pass decoder reads every observed child as a workload, so it also
// carries the few fields the error wiring reads (wiring.go): an
// IngressRoute's middlewares, a Middleware's errors service and an
// EndpointSlice's addresses; other kinds leave them empty.
type workload struct {
	Kind     string `json:"kind"`
	Metadata meta   `json:"metadata"`
	Spec     struct {
		Replicas *int32 `json:"replicas"`
		Template struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		} `json:"template"`
		// StatefulSet only.
		PodManagementPolicy  string            `json:"podManagementPolicy"`
		VolumeClaimTemplates []json.RawMessage `json:"volumeClaimTemplates"`
		Routes               []struct {
			Middlewares []struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"middlewares"`
		} `json:"routes"`
		Errors *struct {
			Service serviceRef `json:"service"`
		} `json:"errors"`
		// Middleware stripPrefix only.
		StripPrefix *struct {
			Prefixes []string `json:"prefixes"`
		} `json:"stripPrefix"`
	} `json:"spec"`
	Endpoints []struct {
		Addresses []string `json:"addresses"`
	} `json:"endpoints"`
	Status struct {
		ObservedGeneration int64  `json:"observedGeneration"`
		Replicas           int32  `json:"replicas"`
		UpdatedReplicas    int32  `json:"updatedReplicas"`
		ReadyReplicas      int32  `json:"readyReplicas"`
		AvailableReplicas  int32  `json:"availableReplicas"`
		CurrentRevision    string `json:"currentRevision"`
		UpdateRevision     string `json:"updateRevision"`
		Conditions         []struct {
			Type    string `json:"type"`
			Status  string `json:"status"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"conditions"`
	} `json:"status"`
}

// pod is a related Pod as the status logic reads it. The one-pass decoder
// reads every related object as a pod, so it also carries what the error
// wiring reads of the chart's error-page Service (Spec; a pod leaves it
// empty).
type pod struct {
	Metadata meta        `json:"metadata"`
	Spec     serviceSpec `json:"spec"`
	Status   struct {
		Phase             string                   `json:"phase"`
		PodIP             string                   `json:"podIP"`
		StartTime         *metav1.Time             `json:"startTime"`
		Conditions        []corev1.PodCondition    `json:"conditions"`
		ContainerStatuses []corev1.ContainerStatus `json:"containerStatuses"`
	} `json:"status"`
}

// ready reports the pod's Ready condition and when it last changed.
func (p *pod) ready() (bool, metav1.Time) {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue, c.LastTransitionTime
		}
	}
	return false, metav1.Time{}
}

// observed is everything of a sync request the status logic reads.
type observed struct {
	workload *workload // nil when missing
	pods     []pod     // related pods, sorted by name, terminating ones left out
	wiring   wiringView
}

// Group keys of the children and related objects, as Metacontroller sends them.
var (
	groupService       = metacontroller.GroupKey("Service", "v1")
	groupDeployment    = metacontroller.GroupKey("Deployment", "apps/v1")
	groupStatefulSet   = metacontroller.GroupKey("StatefulSet", "apps/v1")
	groupMiddleware    = metacontroller.GroupKey("Middleware", "traefik.io/v1alpha1")
	groupIngressRoute  = metacontroller.GroupKey("IngressRoute", "traefik.io/v1alpha1")
	groupEndpointSlice = metacontroller.GroupKey("EndpointSlice", "discovery.k8s.io/v1")
	groupPod           = metacontroller.GroupKey("Pod", "v1")
)

// observe decodes the workload the spec asks for, the related pods and the
// error wiring (cfg names the chart's error-page Service).
func observe(req *metacontroller.SyncRequest, p *parent, cfg Config) (observed, error) {
	var o observed
	group := workloadGroup(p)
	if raw, ok := req.Children.Named(group, p.Metadata.Namespace, p.Metadata.Name); ok {
		o.workload = new(workload)
		if err := json.Unmarshal(raw, o.workload); err != nil {
			return o, fmt.Errorf("decoding observed %s %q: %w", group, p.Metadata.Name, err)
		}
	}
	pods := make(map[string]pod, len(req.Related[groupPod]))
	for key, raw := range req.Related[groupPod] {
		var pd pod
		if err := json.Unmarshal(raw, &pd); err != nil {
			return o, fmt.Errorf("decoding related pod %q: %w", key, err)
		}
		pods[key] = pd
	}
	o.pods = livePods(pods)
	o.wiring = viewWiring(p.Metadata.Name, p.Metadata.Namespace, childOf(req.Children, p.Metadata.Namespace), relatedErrorService(req.Related, cfg))
	return o, nil
}

// workloadGroup is the group key of the workload the spec asks for.
func workloadGroup(p *parent) string {
	if p.Spec.Type == schema.TypeStatefulService {
		return groupStatefulSet
	}
	return groupDeployment
}

// livePods are the pods that say something about the app's future, sorted
// by name: terminating ones are left out, and a pod without a name is named
// by its key.
func livePods(pods map[string]pod) []pod {
	out := make([]pod, 0, len(pods))
	for key, pd := range pods {
		if pd.Metadata.DeletionTimestamp != nil {
			continue
		}
		if pd.Metadata.Name == "" {
			pd.Metadata.Name = metacontroller.ParseKey(key).Name
		}
		out = append(out, pd)
	}
	if len(out) == 0 {
		return nil
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Metadata.Name < out[j].Metadata.Name })
	return out
}
