package children

import (
	"net/netip"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/stackdome/stackdome/schema"
)

// The Services of a resource — its own, the StatefulSet's headless one, and
// the mirrored error-page Service with its EndpointSlice — built typed, as
// every core kind is (see the package comment).

// Labels of the mirrored EndpointSlice.
const (
	// labelServiceName ties an EndpointSlice to its Service.
	labelServiceName = discoveryv1.LabelServiceName
	// labelSliceManagedBy names the manager of an EndpointSlice; the
	// EndpointSlice controllers leave slices of another manager alone.
	labelSliceManagedBy = discoveryv1.LabelManagedBy
	// sliceManagedBy is stackdome's value of labelSliceManagedBy.
	sliceManagedBy = "stackdome.io"
	// errorPortName names the port of the mirrored Service and slice; Traefik
	// matches a slice's port to the Service's by this name.
	errorPortName = "errors"
)

func service(name, instance string, spec schema.Spec, headless bool) *corev1.Service {
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: objectMeta(name, instance),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: Selector(instance),
		},
	}
	if headless {
		// The governing Service of a StatefulSet: peers find each other
		// before they are ready.
		svc.Spec.ClusterIP = corev1.ClusterIPNone
		svc.Spec.PublishNotReadyAddresses = true
	}
	for _, p := range spec.Ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
			Name: p.Name, Port: p.Port, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString(p.Name),
		})
	}
	return svc
}

// mirrorService is the selectorless, headless Service the errors Middleware
// points at. Headless: it needs no ClusterIP of its own and no service-proxy
// rules; Traefik reads its EndpointSlice (its errors Middleware never uses
// the Service's ClusterIP).
func mirrorService(cfg Config, name string) *corev1.Service {
	port := cfg.ErrorService.Port
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: objectMeta(schema.ErrorPagesName(name), name),
		Spec: corev1.ServiceSpec{
			Type:      corev1.ServiceTypeClusterIP,
			ClusterIP: corev1.ClusterIPNone,
			Ports: []corev1.ServicePort{{
				Name: errorPortName, Port: port, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(port),
			}},
		},
	}
}

// mirrorSlice is the EndpointSlice of the mirrored Service: one ready
// endpoint per address, all of the first address's family.
func mirrorSlice(cfg Config, name string, addrs []netip.Addr) *discoveryv1.EndpointSlice {
	md := objectMeta(schema.ErrorPagesName(name), name)
	md.Labels[labelServiceName] = schema.ErrorPagesName(name)
	md.Labels[labelSliceManagedBy] = sliceManagedBy
	family := discoveryv1.AddressTypeIPv4
	if addrs[0].Is6() {
		family = discoveryv1.AddressTypeIPv6
	}
	var eps []discoveryv1.Endpoint
	for _, a := range addrs {
		if a.Is6() != addrs[0].Is6() {
			continue
		}
		eps = append(eps, discoveryv1.Endpoint{Addresses: []string{a.String()}, Conditions: discoveryv1.EndpointConditions{Ready: new(true)}})
	}
	return &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta:  md,
		AddressType: family,
		Endpoints:   eps,
		Ports: []discoveryv1.EndpointPort{{
			Name: new(errorPortName), Port: new(cfg.ErrorService.Port), Protocol: new(corev1.ProtocolTCP),
		}},
	}
}
