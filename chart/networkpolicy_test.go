package chart

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// source is a pod that tries to reach stackdome: its namespace and labels.
type source struct {
	namespace string
	labels    labels.Set
}

// The pods the NetworkPolicy tests knock with: Metacontroller and Prometheus
// in namespaces of their own, Traefik, and a namespace "platform" where
// Metacontroller and Prometheus run side by side with a pod that is neither.
var policySources = map[string]source{
	"metacontroller":          {"metacontroller", labels.Set{"app.kubernetes.io/name": "metacontroller"}},
	"prometheus":              {"monitoring", labels.Set{"app.kubernetes.io/name": "prometheus"}},
	"traefik":                 {"traefik", labels.Set{"app.kubernetes.io/name": "traefik"}},
	"platform/metacontroller": {"platform", labels.Set{"app.kubernetes.io/name": "metacontroller"}},
	"platform/prometheus":     {"platform", labels.Set{"app.kubernetes.io/name": "prometheus"}},
	"platform/shell":          {"platform", labels.Set{"app": "shell"}},
	"platform/traefik":        {"platform", labels.Set{"app.kubernetes.io/name": "traefik"}},
}

// reachable returns the names of stackdome's container ports that np lets
// src open, sorted. It follows NetworkPolicy's ingress semantics for what the
// chart can render: a rule without from admits every source; a peer's
// namespaceSelector and podSelector must both match (without a
// namespaceSelector the peer means pods of the policy's own namespace); a
// rule without ports admits every port, a port is matched by name or by
// number. Namespaces carry only kubernetes.io/metadata.name, as every
// Kubernetes since 1.22 sets it. An ipBlock peer fails the test: a pod
// source says nothing about it.
func reachable(t *testing.T, np *networkingv1.NetworkPolicy, ports map[string]int32, src source) []string {
	t.Helper()
	admitsSource := func(rule networkingv1.NetworkPolicyIngressRule) bool {
		if len(rule.From) == 0 {
			return true
		}
		for _, peer := range rule.From {
			if peer.IPBlock != nil {
				t.Fatalf("ipBlock peer %+v: the test cannot judge it", peer.IPBlock)
			}
			nsOK := src.namespace == np.Namespace
			if peer.NamespaceSelector != nil {
				nsOK = matches(t, peer.NamespaceSelector, labels.Set{"kubernetes.io/metadata.name": src.namespace})
			}
			podOK := peer.PodSelector == nil || matches(t, peer.PodSelector, src.labels)
			if nsOK && podOK {
				return true
			}
		}
		return false
	}
	admitsPort := func(rule networkingv1.NetworkPolicyIngressRule, name string, number int32) bool {
		if len(rule.Ports) == 0 {
			return true
		}
		for _, p := range rule.Ports {
			if p.Port == nil || p.Port.StrVal == name || (p.Port.StrVal == "" && p.Port.IntVal == number) {
				return true
			}
		}
		return false
	}
	var open []string
	for name, number := range ports {
		for _, rule := range np.Spec.Ingress {
			if admitsSource(rule) && admitsPort(rule, name, number) {
				open = append(open, name)
				break
			}
		}
	}
	slices.Sort(open)
	return open
}

// matches is LabelSelector semantics: an empty selector matches everything.
func matches(t *testing.T, sel *metav1.LabelSelector, set labels.Set) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatal(err)
	}
	return s.Matches(set)
}

// TestNetworkPolicyOpensEachPortToItsOwnClients knocks on every container
// port of stackdome's pods, the hooks' and the error pages', from pods of
// several namespaces: the hooks port (/sync) opens to Metacontroller only,
// never to Prometheus' namespace; the metrics ports to Prometheus' namespace
// only, never to Metacontroller's; the pages port to Traefik only (its
// namespace and pods as appDefaults.networkPolicy names them), so that
// nothing else can hold the pages' connections. Where the two share a
// namespace, a namespace rule cannot tell them apart — every pod there
// reaches both ports, which NOTES warns about — and the pod selectors
// restore the split. A port is named by its pods: hooks/http, pages/errors.
func TestNetworkPolicyOpensEachPortToItsOwnClients(t *testing.T) {
	oneNamespace := []string{"networkPolicy.metacontrollerNamespace=platform", "networkPolicy.monitoringNamespace=platform"}
	pages := []string{"pages/errors"}
	tests := map[string]struct {
		in   install
		want map[string][]string // source → ports it reaches
	}{
		"defaults: nobody scrapes": {
			in: install{},
			want: map[string][]string{
				"metacontroller": {"hooks/http"}, "prometheus": nil, "traefik": pages,
				"platform/metacontroller": nil, "platform/prometheus": nil, "platform/shell": nil, "platform/traefik": nil,
			},
		},
		"prometheus may scrape": {
			in: install{set: []string{"networkPolicy.monitoringNamespace=monitoring"}},
			want: map[string][]string{
				"metacontroller": {"hooks/http"}, "prometheus": {"hooks/metrics", "pages/metrics"}, "traefik": pages,
				"platform/metacontroller": nil, "platform/prometheus": nil, "platform/shell": nil, "platform/traefik": nil,
			},
		},
		"error pages off": {
			in: install{set: []string{"networkPolicy.monitoringNamespace=monitoring", "errorPages.enabled=false"}},
			want: map[string][]string{
				"metacontroller": {"hooks/http"}, "prometheus": {"hooks/metrics"}, "traefik": nil,
				"platform/metacontroller": nil, "platform/prometheus": nil, "platform/shell": nil, "platform/traefik": nil,
			},
		},
		"metacontroller elsewhere": {
			in: install{set: []string{"networkPolicy.metacontrollerNamespace=platform", "networkPolicy.monitoringNamespace=monitoring"}},
			want: map[string][]string{
				"metacontroller": nil, "prometheus": {"hooks/metrics", "pages/metrics"}, "traefik": pages,
				"platform/metacontroller": {"hooks/http"}, "platform/prometheus": {"hooks/http"}, "platform/shell": {"hooks/http"}, "platform/traefik": {"hooks/http"},
			},
		},
		"traefik in a shared namespace: its pods only": {
			in: install{set: []string{"appDefaults.networkPolicy.traefikNamespace=platform", "appDefaults.networkPolicy.traefikPodLabels.app\\.kubernetes\\.io/name=traefik"}},
			want: map[string][]string{
				"metacontroller": {"hooks/http"}, "prometheus": nil, "traefik": nil,
				"platform/metacontroller": nil, "platform/prometheus": nil, "platform/shell": nil, "platform/traefik": pages,
			},
		},
		"traefik's namespace, any pod": {
			in: install{set: []string{"appDefaults.networkPolicy.traefikNamespace=platform"}},
			want: map[string][]string{
				"metacontroller": {"hooks/http"}, "prometheus": nil, "traefik": nil,
				"platform/metacontroller": pages, "platform/prometheus": pages, "platform/shell": pages, "platform/traefik": pages,
			},
		},
		"one namespace, no pod selectors: the namespace reaches both": {
			in: install{set: oneNamespace},
			want: map[string][]string{
				"metacontroller": nil, "prometheus": nil, "traefik": pages,
				"platform/metacontroller": {"hooks/http", "hooks/metrics", "pages/metrics"},
				"platform/prometheus":     {"hooks/http", "hooks/metrics", "pages/metrics"},
				"platform/shell":          {"hooks/http", "hooks/metrics", "pages/metrics"},
				"platform/traefik":        {"hooks/http", "hooks/metrics", "pages/metrics"},
			},
		},
		"one namespace, pod selectors": {
			in: install{files: []string{"one-namespace.yaml"}},
			want: map[string][]string{
				"metacontroller": nil, "prometheus": nil, "traefik": pages,
				"platform/metacontroller": {"hooks/http"}, "platform/prometheus": {"hooks/metrics", "pages/metrics"},
				"platform/shell": nil, "platform/traefik": nil,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs := decode(t, render(t, tc.in))
			// Each NetworkPolicy with the container ports of the pods it selects.
			type policy struct {
				np    *networkingv1.NetworkPolicy
				ports map[string]int32
			}
			portsOf := func(d *appsv1.Deployment) map[string]int32 {
				ports := map[string]int32{}
				for _, p := range d.Spec.Template.Spec.Containers[0].Ports {
					ports[p.Name] = p.ContainerPort
				}
				return ports
			}
			hooksPorts := portsOf(find[*appsv1.Deployment](t, objs, "Deployment"))
			if diff := cmp.Diff(map[string]int32{"http": 8080, "metrics": 8081}, hooksPorts); diff != "" {
				t.Fatalf("hooks container ports (-want +got):\n%s", diff)
			}
			policies := map[string]policy{"hooks": {find[*networkingv1.NetworkPolicy](t, objs, "NetworkPolicy"), hooksPorts}}
			for _, o := range objs {
				if d, ok := o.typed.(*appsv1.Deployment); ok && isPages(o) {
					pagesPorts := portsOf(d)
					if diff := cmp.Diff(map[string]int32{"http": 8080, "errors": 8082, "metrics": 8081}, pagesPorts); diff != "" {
						t.Fatalf("error-page container ports (-want +got):\n%s", diff)
					}
					np := findPages[*networkingv1.NetworkPolicy](t, objs, "NetworkPolicy")
					if !matches(t, &np.Spec.PodSelector, d.Spec.Template.Labels) {
						t.Fatal("the error-page NetworkPolicy does not select the error-page pods")
					}
					policies["pages"] = policy{np, pagesPorts}
				}
			}
			got := map[string][]string{}
			for pods, p := range policies {
				if diff := cmp.Diff([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, p.np.Spec.PolicyTypes); diff != "" {
					t.Errorf("%s policyTypes (-want +got):\n%s", pods, diff)
				}
				for src, s := range policySources {
					for _, port := range reachable(t, p.np, p.ports, s) {
						got[src] = append(got[src], pods+"/"+port)
					}
				}
			}
			for src := range policySources {
				slices.Sort(got[src])
				if _, ok := got[src]; !ok {
					got[src] = nil
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ports each source reaches (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPagesNetworkPolicyTakesExtraRules: networkPolicy.pagesExtraIngress is
// appended to the error-page pods' rules, for a Traefik no pod selector
// matches (one on the host network, reached from the nodes' addresses).
func TestPagesNetworkPolicyTakesExtraRules(t *testing.T) {
	objs := decode(t, render(t, install{set: []string{"networkPolicy.pagesExtraIngress[0].from[0].ipBlock.cidr=192.0.2.0/24", "networkPolicy.pagesExtraIngress[0].ports[0].port=errors"}}))
	np := findPages[*networkingv1.NetworkPolicy](t, objs, "NetworkPolicy")
	last := np.Spec.Ingress[len(np.Spec.Ingress)-1]
	if len(last.From) != 1 || last.From[0].IPBlock == nil || last.From[0].IPBlock.CIDR != "192.0.2.0/24" {
		t.Errorf("last ingress rule %+v, want the ipBlock of networkPolicy.pagesExtraIngress", last)
	}
	if hooks := find[*networkingv1.NetworkPolicy](t, objs, "NetworkPolicy"); len(hooks.Spec.Ingress) != 1 {
		t.Errorf("the hooks' NetworkPolicy has %d rules, want 1: pagesExtraIngress is the pages' only", len(hooks.Spec.Ingress))
	}
}
