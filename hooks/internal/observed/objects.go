package observed

import (
	"bytes"
	"encoding/json"
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The observed objects are decoded into the few fields the hook reads, never
// into whole API objects: a sync request carries every related Pod with its
// managedFields, and what is not decoded costs one scan instead of an
// allocation per field.

// Child is an observed child of any kind, decoded into the union of the
// fields the hook reads of each: a Deployment's or StatefulSet's replicas,
// template revision and status; an IngressRoute's routes; a Middleware's
// errors service or stripPrefix; an EndpointSlice's addresses. A kind
// leaves the fields of the others empty.
type Child struct {
	Kind     string `json:"kind"`
	Metadata Meta   `json:"metadata"`
	Spec     struct {
		Replicas *int32 `json:"replicas"`
		Template struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
			} `json:"metadata"`
		} `json:"template"`
		// CronJob only: the pod template of its Jobs.
		JobTemplate struct {
			Spec struct {
				Template struct {
					Metadata struct {
						Annotations map[string]string `json:"annotations"`
					} `json:"metadata"`
				} `json:"template"`
			} `json:"spec"`
		} `json:"jobTemplate"`
		// StatefulSet only.
		PodManagementPolicy  string            `json:"podManagementPolicy"`
		VolumeClaimTemplates []json.RawMessage `json:"volumeClaimTemplates"`
		// IngressRoute only.
		Routes []struct {
			Middlewares []struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"middlewares"`
		} `json:"routes"`
		// Middleware errors only.
		Errors *struct {
			Service ServiceRef `json:"service"`
		} `json:"errors"`
		// Middleware stripPrefix only.
		StripPrefix *struct {
			Prefixes []string `json:"prefixes"`
		} `json:"stripPrefix"`
	} `json:"spec"`
	// EndpointSlice only.
	Endpoints []struct {
		Addresses []string `json:"addresses"`
	} `json:"endpoints"`
	// Deployment and StatefulSet only.
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
			// Job only.
			LastTransitionTime metav1.Time `json:"lastTransitionTime"`
		} `json:"conditions"`
		jobStatus
		// CronJob only.
		LastScheduleTime   *metav1.Time `json:"lastScheduleTime"`
		LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime"`
	} `json:"status"`
}

// Related is a related object of any kind, decoded into the union of the
// fields the hook reads of each: a Pod's status, the chart's error-page
// Service's ClusterIPs (Spec; a Pod leaves it empty), a ConfigMap's or
// Secret's content as its digest (the values are hashed while decoded and
// never kept).
type Related struct {
	Metadata   Meta        `json:"metadata"`
	Spec       ServiceSpec `json:"spec"`
	Data       contentSum  `json:"data"`
	BinaryData contentSum  `json:"binaryData"`
	Status     struct {
		Phase             string                   `json:"phase"`
		PodIP             string                   `json:"podIP"`
		StartTime         *metav1.Time             `json:"startTime"`
		Conditions        []corev1.PodCondition    `json:"conditions"`
		ContainerStatuses []corev1.ContainerStatus `json:"containerStatuses"`
		// InitContainerStatuses: spec.migration's container migrate and
		// the sidecars.
		InitContainerStatuses []corev1.ContainerStatus `json:"initContainerStatuses"`
		// A related Job's (a CronJob's run) only; its conditions are
		// Conditions.
		jobStatus
	} `json:"status"`
}

// Ready reports a pod's Ready condition and when it last changed.
func (r *Related) Ready() (bool, metav1.Time) {
	for _, c := range r.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue, c.LastTransitionTime
		}
	}
	return false, metav1.Time{}
}

// ServiceSpec is the part of a Service's spec the hook reads.
type ServiceSpec struct {
	ClusterIP  string   `json:"clusterIP"`
	ClusterIPs []string `json:"clusterIPs"`
}

// clusterIP is the primary ClusterIP of a Service spec (clusterIPs[0], else
// clusterIP), or none for a headless Service or one without a usable address.
func (s ServiceSpec) clusterIP() []netip.Addr {
	ip := s.ClusterIP
	if len(s.ClusterIPs) > 0 {
		ip = s.ClusterIPs[0]
	}
	a, err := netip.ParseAddr(ip)
	if err != nil || !usable(a) {
		return nil
	}
	return []netip.Addr{a}
}

// ServiceRef is the service of an errors Middleware, as it is on the wire.
// Port is the raw JSON value (a number, or a port name).
type ServiceRef struct {
	Name      string          `json:"name"`
	Namespace string          `json:"namespace,omitempty"`
	Port      json.RawMessage `json:"port"`
}

// Equal reports whether two references name the same service and port.
func (r ServiceRef) Equal(o ServiceRef) bool {
	return r.Name == o.Name && r.Namespace == o.Namespace && bytes.Equal(r.Port, o.Port)
}

// usable says an address may be an endpoint: the API server refuses
// unspecified, loopback, link-local and multicast ones in an EndpointSlice.
func usable(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsValid() && a.Zone() == "" && !a.IsUnspecified() && !a.IsLoopback() && !a.IsLinkLocalUnicast() && !a.IsMulticast()
}

// sliceAddresses are the usable addresses of an observed EndpointSlice, in
// order, without duplicates.
func (c *Child) sliceAddresses() []netip.Addr {
	var out []netip.Addr
	seen := map[netip.Addr]bool{}
	for _, e := range c.Endpoints {
		for _, s := range e.Addresses {
			a, err := netip.ParseAddr(s)
			if err != nil || !usable(a) || seen[a] {
				continue
			}
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// refersTo says an observed IngressRoute has a route using the Middleware
// mw of its own namespace.
func (c *Child) refersTo(mw string) bool {
	for _, r := range c.Spec.Routes {
		for _, m := range r.Middlewares {
			if m.Name == mw && (m.Namespace == "" || m.Namespace == c.Metadata.Namespace) {
				return true
			}
		}
	}
	return false
}

// errorsService is an observed Middleware's errors service, or nil.
func (c *Child) errorsService() *ServiceRef {
	if c.Spec.Errors == nil || c.Spec.Errors.Service.Name == "" || len(c.Spec.Errors.Service.Port) == 0 {
		return nil
	}
	s := c.Spec.Errors.Service
	var compact bytes.Buffer
	if json.Compact(&compact, s.Port) != nil {
		return nil
	}
	s.Port = compact.Bytes()
	return &s
}
