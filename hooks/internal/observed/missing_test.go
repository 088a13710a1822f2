package observed

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackdome/stackdome/metacontroller"
)

// TestMissing finds the children an answer returns that the request does
// not show, under either hook version's keys, through both doors (Decode,
// FromSyncRequest).
func TestMissing(t *testing.T) {
	svc := ChildRef{Kind: "Service", APIVersion: "v1", Name: "web"}
	dep := ChildRef{Kind: "Deployment", APIVersion: "apps/v1", Name: "web"}
	pdb := ChildRef{Kind: "PodDisruptionBudget", APIVersion: "policy/v1", Name: "web"}
	want := []ChildRef{svc, dep, pdb}
	tests := map[string]struct {
		reason   string
		children string
		missing  []ChildRef
	}{
		"all observed, v1 keys": {"names as keys", `{"Service.v1":{"web":{}},"Deployment.apps/v1":{"web":{}},"PodDisruptionBudget.policy/v1":{"web":{}}}`, nil},
		"all observed, v2 keys": {"namespace/name keys", `{"Service.v1":{"shop/web":{}},"Deployment.apps/v1":{"shop/web":{}},"PodDisruptionBudget.policy/v1":{"shop/web":{}}}`, nil},
		"Service refused":       {"its group is there, empty", `{"Service.v1":{},"Deployment.apps/v1":{"shop/web":{}},"PodDisruptionBudget.policy/v1":{"shop/web":{}}}`, []ChildRef{svc}},
		"another Service":       {"a child of another name is not this one", `{"Service.v1":{"shop/web-headless":{}},"Deployment.apps/v1":{"web":{}},"PodDisruptionBudget.policy/v1":{"web":{}}}`, []ChildRef{svc}},
		"another namespace":     {"a v2 key of another namespace is not this one", `{"Service.v1":{"other/web":{}},"Deployment.apps/v1":{"web":{}},"PodDisruptionBudget.policy/v1":{"web":{}}}`, []ChildRef{svc}},
		"group not watched":     {"no group, no rule: Metacontroller could not show it", `{"Service.v1":{},"Deployment.apps/v1":{}}`, []ChildRef{svc, dep}},
		"nothing observed":      {"the first sync", `{"Service.v1":{},"Deployment.apps/v1":{},"PodDisruptionBudget.policy/v1":{}}`, want},
		"undecodable child":     {"a child that does not decode exists", `{"Service.v1":{"web":{"spec":"x"}},"Deployment.apps/v1":{"web":{"status":{"readyReplicas":"2"}}},"PodDisruptionBudget.policy/v1":{"web":{}}}`, nil},
	}
	for name, tc := range tests {
		for _, form := range []string{"Decode", "FromSyncRequest"} {
			t.Run(name+", "+form, func(t *testing.T) {
				body := []byte(`{"parent":{"metadata":{"name":"web","namespace":"shop"}},"children":` + tc.children + `}`)
				var r Request
				if form == "Decode" {
					if err := Decode(body, &r, NewCache(1<<20), Budget{}); err != nil {
						t.Fatal(err)
					}
				} else {
					var req metacontroller.SyncRequest
					if err := json.Unmarshal(body, &req); err != nil {
						t.Fatal(err)
					}
					r = FromSyncRequest(&req)
				}
				if diff := cmp.Diff(tc.missing, r.Missing("shop", want)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
				}
			})
		}
	}
}
