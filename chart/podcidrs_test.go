package chart

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPodCIDRsAreRequired: the chart does not guess the pod network (its
// old default, 10.244.0.0/16, is right only on kind, kubeadm and flannel).
// Rendering without podCIDRs — absent, null or the default empty list — fails with a message
// saying how to find them and naming the usual values; with them, they are
// --dial-allow.
func TestPodCIDRsAreRequired(t *testing.T) {
	wantMsg := []string{
		"podCIDRs is required",
		"kubectl get nodes -o jsonpath='{.items[*].spec.podCIDRs}'",
		"kind, kubeadm, flannel: 10.244.0.0/16",
		"Calico", "EKS", "GKE",
	}
	for name, set := range map[string][]string{"absent (the default, [])": nil, "null": {"podCIDRs=null"}} {
		t.Run(name, func(t *testing.T) {
			_, err := runHelm(t, install{noPodCIDRs: true, set: set}.args("template")...)
			if err == nil {
				t.Fatal("rendered without podCIDRs")
			}
			for _, w := range wantMsg {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the failure does not say %q:\n%v", w, err)
				}
			}
		})
	}
	t.Run("given", func(t *testing.T) {
		objs := decode(t, render(t, install{noPodCIDRs: true, set: []string{"podCIDRs={10.42.0.0/16,fd00:42::/56}"}}))
		args := find[*appsv1.Deployment](t, objs, "Deployment").Spec.Template.Spec.Containers[0].Args
		if !slices.Contains(args, "--dial-allow=10.42.0.0/16,fd00:42::/56") {
			t.Errorf("args %q lack the podCIDRs as --dial-allow", args)
		}
	})
}

// TestEgressPolicy: networkPolicy.egress.enabled restricts stackdome's pods
// to connecting to pods (any namespace, any port — the ports it verifies)
// and the podCIDRs, nothing else: no 0.0.0.0/0, no port list, no DNS, no
// API server. Off by default, when the NetworkPolicy is Ingress only.
func TestEgressPolicy(t *testing.T) {
	t.Run("off by default", func(t *testing.T) {
		np := find[*networkingv1.NetworkPolicy](t, decode(t, render(t, install{})), "NetworkPolicy")
		if diff := cmp.Diff([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, np.Spec.PolicyTypes); diff != "" {
			t.Errorf("policyTypes (-want +got):\n%s", diff)
		}
		if np.Spec.Egress != nil {
			t.Errorf("egress rules without egress.enabled: %v", np.Spec.Egress)
		}
	})
	t.Run("enabled", func(t *testing.T) {
		np := find[*networkingv1.NetworkPolicy](t, decode(t, render(t, install{set: []string{
			"networkPolicy.egress.enabled=true", "podCIDRs={10.42.0.0/16,fd00:42::/56}"}})), "NetworkPolicy")
		if diff := cmp.Diff([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}, np.Spec.PolicyTypes); diff != "" {
			t.Errorf("policyTypes (-want +got):\n%s", diff)
		}
		want := []networkingv1.NetworkPolicyEgressRule{{To: []networkingv1.NetworkPolicyPeer{
			{NamespaceSelector: &metav1.LabelSelector{}},
			{IPBlock: &networkingv1.IPBlock{CIDR: "10.42.0.0/16"}},
			{IPBlock: &networkingv1.IPBlock{CIDR: "fd00:42::/56"}},
		}}}
		if diff := cmp.Diff(want, np.Spec.Egress); diff != "" {
			t.Errorf("egress (-want +got):\n%s", diff)
		}
	})
	t.Run("extra rules", func(t *testing.T) {
		np := find[*networkingv1.NetworkPolicy](t, decode(t, render(t, install{set: []string{
			"networkPolicy.egress.enabled=true", "networkPolicy.egress.extra[0].to[0].ipBlock.cidr=10.96.0.0/12"}})), "NetworkPolicy")
		if len(np.Spec.Egress) != 2 || np.Spec.Egress[1].To[0].IPBlock.CIDR != "10.96.0.0/12" {
			t.Errorf("egress.extra not appended: %+v", np.Spec.Egress)
		}
	})
}
