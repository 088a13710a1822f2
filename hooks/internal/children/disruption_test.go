package children

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/schema"
)

// TestDisruptionBudget: a budget of maxUnavailable 1 over the app's pods for
// two pods or more, counted as the autoscaler's floor when it scales; none
// below.
func TestDisruptionBudget(t *testing.T) {
	n := func(v int32) *int32 { return &v }
	cpu := schema.Spec{Type: schema.TypeService, Image: "i"}
	budget := map[string]any{
		"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
		"metadata": map[string]any{"name": "a", "labels": map[string]any{
			schema.LabelName: "a", schema.LabelInstance: "a", schema.LabelManagedBy: schema.ManagedBy}},
		"spec": map[string]any{
			"maxUnavailable": json.Number("1"),
			"selector":       map[string]any{"matchLabels": map[string]any{schema.LabelInstance: "a", schema.LabelManagedBy: schema.ManagedBy}},
		},
	}
	tests := map[string]struct {
		replicas *int32
		auto     *schema.Autoscaling
		want     map[string]any
	}{
		"replicas unset (1)":         {},
		"scaled to zero":             {replicas: n(0)},
		"one replica":                {replicas: n(1)},
		"two replicas":               {replicas: n(2), want: budget},
		"ten replicas":               {replicas: n(10), want: budget},
		"autoscaling from 1":         {auto: &schema.Autoscaling{MinReplicas: n(1), MaxReplicas: 5}},
		"autoscaling, minimum unset": {auto: &schema.Autoscaling{MaxReplicas: 5}},
		"autoscaling from 2":         {auto: &schema.Autoscaling{MinReplicas: n(2), MaxReplicas: 5}, want: budget},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			spec := cpu
			spec.Replicas, spec.Autoscaling = tc.replicas, tc.auto
			var got map[string]any
			if pdb := disruptionBudget("a", spec); pdb != nil {
				m, err := canonical(pdb)
				require.NoError(t, err)
				got = m
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("budget (-want +got):\n%s", diff)
			}
		})
	}
}
