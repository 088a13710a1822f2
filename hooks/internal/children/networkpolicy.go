package children

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/stackdome/stackdome/schema"
)

// NetworkPolicyConfig is where the peers a per-app NetworkPolicy admits
// live, as the platform configures them (the chart renders them from its
// release and values); nothing here is guessed from the cluster.
type NetworkPolicyConfig struct {
	// Default gives a NetworkPolicy to every app whose spec does not say.
	Default bool
	// StackdomeNamespace and StackdomePods select the pods that dial the
	// apps' ports (the chart's release namespace and selector labels).
	StackdomeNamespace string
	StackdomePods      map[string]string
	// TraefikNamespace is Traefik's namespace; TraefikPods, if not empty,
	// narrows the peer to Traefik's pods there.
	TraefikNamespace string
	TraefikPods      map[string]string
}

// namespaceLabel is the label the API server sets on every namespace to
// its name (immutable, since Kubernetes 1.22): a namespace selected by it
// is exactly the one named.
const namespaceLabel = "kubernetes.io/metadata.name"

// NetworkPolicies are the app's NetworkPolicy in namespace ns (the one
// child that depends on the namespace), canonical, or none.
func NetworkPolicies(cfg Config, ns, name string, spec schema.Spec) ([]any, error) {
	np := networkPolicy(cfg, ns, name, spec)
	if np == nil {
		return nil, nil
	}
	m, err := canonical(np)
	if err != nil {
		return nil, err
	}
	return []any{m}, nil
}

// networkPolicy is the app's NetworkPolicy, or nil when the spec (or the
// platform's default) asks for none. Its ingress rules, in order: the
// public ports from Traefik's namespace; every declared port from
// stackdome's pods, so the port gate's dials always reach the app (a
// policy without it would make every verdict a timeout, and the app never
// converge); every declared port from the app's own namespace ns. Nothing
// else: an app without ports admits nothing. Egress is not restricted.
// Every port is named by number and protocol, as the API server stores it.
func networkPolicy(cfg Config, ns, name string, spec schema.Spec) *networkingv1.NetworkPolicy {
	np := cfg.NetworkPolicy
	if !spec.NetworkPolicyEnabled(np.Default) {
		return nil
	}
	ports := func(public bool) []networkingv1.NetworkPolicyPort {
		var out []networkingv1.NetworkPolicyPort
		for _, p := range spec.Ports {
			if public && !p.Public {
				continue
			}
			tcp, n := corev1.ProtocolTCP, intstr.FromInt32(p.Port)
			out = append(out, networkingv1.NetworkPolicyPort{Protocol: &tcp, Port: &n})
		}
		return out
	}
	peer := func(namespace string, pods map[string]string) networkingv1.NetworkPolicyPeer {
		p := networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{namespaceLabel: namespace}}}
		if len(pods) > 0 {
			p.PodSelector = &metav1.LabelSelector{MatchLabels: maps.Clone(pods)}
		}
		return p
	}
	var rules []networkingv1.NetworkPolicyIngressRule
	if public := ports(true); len(public) > 0 {
		rules = append(rules, networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{peer(np.TraefikNamespace, np.TraefikPods)}, Ports: public})
	}
	if all := ports(false); len(all) > 0 {
		rules = append(rules,
			networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{peer(np.StackdomeNamespace, np.StackdomePods)}, Ports: all},
			networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{peer(ns, nil)}, Ports: ports(false)},
		)
	}
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: objectMeta(name, name),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: Selector(name)},
			Ingress:     rules,
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
		},
	}
}
