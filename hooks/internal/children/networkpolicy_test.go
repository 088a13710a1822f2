package children

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"

	"github.com/stackdome/stackdome/schema"
)

// source is a pod that may connect: its namespace's labels and its own.
type source struct {
	nsLabels, podLabels map[string]string
	ns                  string
}

// admits reports whether policy lets from connect to port (TCP) on the
// policy's pods in namespace ns, with NetworkPolicy's semantics
// (networking/v1 API docs): an isolating Ingress policy admits what some
// rule admits; a rule without from admits every source, without ports every
// port; a peer with only a podSelector means pods of the policy's own
// namespace; a peer with a namespaceSelector (and maybe a podSelector)
// means pods matching both.
func admits(t *testing.T, np *networkingv1.NetworkPolicy, ns string, from source, port int32) bool {
	t.Helper()
	sel := func(s *metav1.LabelSelector, l map[string]string) bool {
		ls, err := metav1.LabelSelectorAsSelector(s)
		if err != nil {
			t.Fatal(err)
		}
		return ls.Matches(k8slabels.Set(l))
	}
	for _, r := range np.Spec.Ingress {
		peerOK := len(r.From) == 0
		for _, p := range r.From {
			switch {
			case p.IPBlock != nil:
			case p.NamespaceSelector == nil:
				peerOK = peerOK || (from.ns == ns && sel(p.PodSelector, from.podLabels))
			default:
				peerOK = peerOK || (sel(p.NamespaceSelector, from.nsLabels) && (p.PodSelector == nil || sel(p.PodSelector, from.podLabels)))
			}
		}
		portOK := len(r.Ports) == 0
		for _, p := range r.Ports {
			portOK = portOK || ((p.Protocol == nil || *p.Protocol == "TCP") && (p.Port == nil || p.Port.IntValue() == int(port)))
		}
		if peerOK && portOK {
			return true
		}
	}
	return false
}

func namespace(name string) map[string]string {
	return map[string]string{namespaceLabel: name, "team": "x"}
}

// fixtureSpecs are the valid specs of the golden sync requests.
func fixtureSpecs(t *testing.T) []schema.Spec {
	paths, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "sync", "*.request.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	var out []schema.Spec
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var req struct {
			Parent struct {
				Spec schema.Spec `json:"spec"`
			} `json:"parent"`
		}
		// The fixtures of malformed and invalid specs make no children.
		if json.Unmarshal(b, &req) != nil || schema.Validate(req.Parent.Spec) != nil {
			continue
		}
		out = append(out, req.Parent.Spec)
	}
	return out
}

// TestNetworkPolicyNeverBlocksTheGate: over every golden spec and a
// thousand random port sets, under several platform configurations, the
// policy produced admits stackdome's pods to every declared port — the port
// gate's dials — and Traefik to every public one, the app's namespace to
// every declared port; and nothing else: not another namespace, not a pod
// of stackdome's namespace without stackdome's labels, not Traefik to a
// private port, no undeclared port.
func TestNetworkPolicyNeverBlocksTheGate(t *testing.T) {
	specs := fixtureSpecs(t)
	rng := rand.New(rand.NewPCG(26, 1))
	for range 1000 {
		var ports []schema.Port
		used := map[int32]bool{}
		for i := range rng.IntN(6) {
			n := int32(1 + rng.IntN(65535))
			if used[n] {
				continue
			}
			used[n] = true
			ports = append(ports, schema.Port{Name: "p" + strconv.Itoa(i), Port: n, Public: rng.IntN(2) == 0})
		}
		specs = append(specs, schema.Spec{Type: schema.TypeService, Image: "i", Host: "a.example.com", Ports: ports})
	}
	on := true
	configs := []NetworkPolicyConfig{
		{StackdomeNamespace: "stackdome", StackdomePods: map[string]string{"app.kubernetes.io/name": "stackdome", "app.kubernetes.io/instance": "stackdome", "app.kubernetes.io/component": "controller"}, TraefikNamespace: "traefik"},
		{Default: true, StackdomeNamespace: "platform", StackdomePods: map[string]string{"app": "sd"}, TraefikNamespace: "ingress", TraefikPods: map[string]string{"app.kubernetes.io/name": "traefik"}},
	}
	const appNS = "shop"
	checked := 0
	for _, np := range configs {
		stackdome := source{ns: np.StackdomeNamespace, nsLabels: namespace(np.StackdomeNamespace), podLabels: np.StackdomePods}
		traefik := source{ns: np.TraefikNamespace, nsLabels: namespace(np.TraefikNamespace), podLabels: map[string]string{"app.kubernetes.io/name": "traefik"}}
		neighbour := source{ns: appNS, nsLabels: namespace(appNS), podLabels: map[string]string{"app": "other"}}
		stranger := source{ns: "elsewhere", nsLabels: namespace("elsewhere"), podLabels: np.StackdomePods}
		impostor := source{ns: np.StackdomeNamespace, nsLabels: namespace(np.StackdomeNamespace), podLabels: map[string]string{"app": "debug"}}
		for _, spec := range specs {
			spec.NetworkPolicy = &schema.NetworkPolicy{Enabled: &on}
			cfg := testConfig()
			cfg.NetworkPolicy = np
			policy := networkPolicy(cfg, appNS, "app", spec)
			if policy == nil {
				t.Fatal("no policy for a spec that asked for one")
			}
			for _, p := range spec.Ports {
				checked++
				want := map[string]bool{"stackdome": true, "traefik": p.Public, "neighbour": true, "stranger": false, "impostor": false}
				got := map[string]bool{
					"stackdome": admits(t, policy, appNS, stackdome, p.Port), "traefik": admits(t, policy, appNS, traefik, p.Port),
					"neighbour": admits(t, policy, appNS, neighbour, p.Port), "stranger": admits(t, policy, appNS, stranger, p.Port),
					"impostor": admits(t, policy, appNS, impostor, p.Port),
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("port %d of %v (-want +got):\n%s", p.Port, spec.Ports, diff)
				}
				if !declared(spec, p.Port+1) && admits(t, policy, appNS, stackdome, p.Port+1) {
					t.Fatalf("undeclared port %d admitted", p.Port+1)
				}
			}
			if len(spec.Ports) == 0 && len(policy.Spec.Ingress) > 0 {
				t.Fatalf("an app without ports admits %v", policy.Spec.Ingress)
			}
		}
	}
	if checked < 2000 {
		t.Fatalf("only %d ports checked", checked)
	}
}

func declared(spec schema.Spec, port int32) bool {
	for _, p := range spec.Ports {
		if p.Port == port {
			return true
		}
	}
	return false
}

// TestNetworkPolicyOptIn: the spec's choice wins; unset, the platform's
// default decides.
func TestNetworkPolicyOptIn(t *testing.T) {
	on, off := true, false
	tests := map[string]struct {
		platform bool
		spec     *schema.NetworkPolicy
		want     bool
	}{
		"neither":                {},
		"the platform's default": {platform: true, want: true},
		"unset enabled":          {platform: true, spec: &schema.NetworkPolicy{}, want: true},
		"the app opts in":        {spec: &schema.NetworkPolicy{Enabled: &on}, want: true},
		"the app opts out":       {platform: true, spec: &schema.NetworkPolicy{Enabled: &off}},
	}
	for name, tc := range tests {
		cfg := testConfig()
		cfg.NetworkPolicy = NetworkPolicyConfig{Default: tc.platform, StackdomeNamespace: "s", StackdomePods: map[string]string{"a": "b"}, TraefikNamespace: "t"}
		got, err := NetworkPolicies(cfg, "ns", "app", schema.Spec{Type: schema.TypeService, Image: "i", NetworkPolicy: tc.spec})
		if err != nil {
			t.Fatal(err)
		}
		if (len(got) == 1) != tc.want {
			t.Errorf("%s: %d policies, want one: %v", name, len(got), tc.want)
		}
	}
}
