package mcrequest

import (
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackdome/stackdome/metacontroller"
)

func object(kind, apiVersion, ns, name string, labels map[string]any) Object {
	md := map[string]any{"name": name, "namespace": ns}
	if labels != nil {
		md["labels"] = labels
	}
	return Object{"kind": kind, "apiVersion": apiVersion, "metadata": md}
}

func keys(o metacontroller.Objects) map[string][]string {
	out := map[string][]string{}
	for g, objs := range o {
		out[g] = []string{}
		for k := range objs {
			out[g] = append(out[g], k)
		}
		sort.Strings(out[g])
	}
	return out
}

// TestRequestKeysAndGroups: every child group of the chart is there, empty
// or not; a rule's group is there whenever the rule is; keys are
// namespace/name at v2 and names at v1, where related objects of another
// namespace are left out.
func TestRequestKeysAndGroups(t *testing.T) {
	parent := object("StackResource", "stackdome.io/v1alpha1", "shop", "web", nil)
	sel := map[string]any{"app": "web"}
	s := Sync{
		Parent:   parent,
		Children: []Object{object("Service", "v1", "", "web", nil)},
		Cluster: []Object{
			object("Pod", "v1", "shop", "web-1", sel), object("Pod", "v1", "shop", "other-1", map[string]any{"app": "other"}),
			object("Service", "v1", "stackdome", "stackdome-error-pages", nil), object("Service", "v1", "stackdome", "else", nil),
		},
		Rules: []metacontroller.RelatedResourceRule{
			{APIVersion: "v1", Resource: "pods", Namespace: "shop", LabelSelector: &metacontroller.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
			{APIVersion: "v1", Resource: "services", Namespace: "stackdome", Names: []string{"stackdome-error-pages"}},
			{APIVersion: "v1", Resource: "secrets", Namespace: "shop", Names: []string{"missing"}},
		},
	}
	tests := map[string]struct {
		version                  string
		wantChildren, wantRelate map[string][]string
	}{
		"v2": {"", map[string][]string{"Service.v1": {"shop/web"}},
			map[string][]string{"Pod.v1": {"shop/web-1"}, "Service.v1": {"stackdome/stackdome-error-pages"}, "Secret.v1": {}}},
		"v1": {"v1", map[string][]string{"Service.v1": {"web"}},
			map[string][]string{"Pod.v1": {"web-1"}, "Service.v1": {}, "Secret.v1": {}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := s
			s.SyncVersion = tc.version
			req := s.Request()
			children := keys(req.Children)
			if len(children) != len(ChildResources) {
				t.Errorf("%d child groups, want the chart's %d", len(children), len(ChildResources))
			}
			for g, want := range tc.wantChildren {
				if diff := cmp.Diff(want, children[g]); diff != "" {
					t.Errorf("children %s (-want +got):\n%s", g, diff)
				}
			}
			if diff := cmp.Diff(tc.wantRelate, keys(req.Related)); diff != "" {
				t.Errorf("related (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefaultKeepsWhatIsSet: a default fills only what the object leaves
// unset (an explicit grace period, security context or pull policy stays),
// and an untagged image is pulled Always.
func TestDefaultKeepsWhatIsSet(t *testing.T) {
	dep := Object{"kind": "Deployment", "apiVersion": "apps/v1", "metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"terminationGracePeriodSeconds": 45, "serviceAccountName": "web",
			"securityContext": map[string]any{"runAsNonRoot": true},
			"containers": []any{
				map[string]any{"name": "app", "image": "ghcr.io/acme/web:1.0"},
				map[string]any{"name": "side", "image": "ghcr.io/acme/side"},
				map[string]any{"name": "pinned", "image": "ghcr.io/acme/web:latest", "imagePullPolicy": "Never"},
			},
		}}}}
	Default(dep)
	pod := Map(dep, "spec", "template", "spec")
	got := map[string]any{"grace": pod["terminationGracePeriodSeconds"], "sa": pod["serviceAccountName"],
		"securityContext": pod["securityContext"], "replicas": Map(dep, "spec")["replicas"]}
	for _, c := range pod["containers"].([]any) {
		got[c.(map[string]any)["name"].(string)] = c.(map[string]any)["imagePullPolicy"]
	}
	want := map[string]any{"grace": 45.0, "sa": "web", "securityContext": map[string]any{"runAsNonRoot": true}, "replicas": 1.0,
		"app": "IfNotPresent", "side": "Always", "pinned": "Never"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaulted Deployment (-want +got):\n%s", diff)
	}
}
