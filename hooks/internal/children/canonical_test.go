package children

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestCanonical(t *testing.T) {
	one := int32(1)
	tests := map[string]struct {
		reason string
		in     any
		want   string
	}{
		"go types as they marshal": {
			reason: "creationTimestamp null, strategy {}, resources {}, status {} all go",
			in: &appsv1.Deployment{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: metav1.ObjectMeta{Name: "web"},
				Spec: appsv1.DeploymentSpec{Replicas: &one, Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "x"}}}}}},
			want: `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":1,"template":{"spec":{"containers":[{"image":"x","name":"app"}]}}}}`,
		},
		"integers stay integers": {
			reason: "a port is 8080, never 8080.0 or a float64 that re-encodes differently",
			in:     map[string]any{"port": 8080, "big": int64(1) << 53},
			want:   `{"big":9007199254740992,"port":8080}`,
		},
		"nested empties": {
			reason: "an object emptied by pruning is itself pruned, depth first",
			in:     map[string]any{"a": map[string]any{"b": map[string]any{"c": nil}, "d": []any{}}, "e": "kept"},
			want:   `{"e":"kept"}`,
		},
		"list items keep their place": {
			reason: "an emptied list item stays: its position means something",
			in:     map[string]any{"l": []any{map[string]any{"x": nil}, "y"}},
			want:   `{"l":[{},"y"]}`,
		},
		"false and zero stay": {
			reason: "only null and empty containers go: false, 0 and \"\" are values",
			in:     map[string]any{"f": false, "z": 0, "s": ""},
			want:   `{"f":false,"s":"","z":0}`,
		},
		"top-level status goes": {
			reason: "a child never carries status",
			in:     map[string]any{"kind": "Service", "status": map[string]any{"loadBalancer": map[string]any{"ingress": []any{"x"}}}},
			want:   `{"kind":"Service"}`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			m, err := canonical(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func TestCanonicalRefusesWhatIsNotAnObject(t *testing.T) {
	for name, in := range map[string]any{"a list": []int{1}, "a string": "x", "a channel": make(chan int)} {
		if _, err := canonical(in); err == nil {
			t.Errorf("%s: canonical accepted it", name)
		}
	}
}
