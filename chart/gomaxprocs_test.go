package chart

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestGOMAXPROCSFollowsTheCPURequest: stackdome runs one P per requested CPU,
// rounded up, whatever the node has, and its soft memory limit
// (GOMEMLIMIT) is the container's memory limit; extraEnv comes after them. Without it Go
// runs a P per CPU of the node, and idle Ps spinning on cores shared with
// Traefik cost Traefik's requests (docs/performance.md).
func TestGOMAXPROCSFollowsTheCPURequest(t *testing.T) {
	c := find[*appsv1.Deployment](t, decode(t, render(t, install{set: []string{"extraEnv[0].name=GODEBUG", "extraEnv[0].value=x=1"}})), "Deployment").
		Spec.Template.Spec.Containers[0]
	want := []corev1.EnvVar{
		{Name: "GOMAXPROCS", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "requests.cpu", Divisor: resource.MustParse("1")}}},
		{Name: "GOMEMLIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1")}}},
		{Name: "GODEBUG", Value: "x=1"},
	}
	if diff := cmp.Diff(want, c.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}
