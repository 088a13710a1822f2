package chart

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/labels"
)

// TestErrorPagesHaveTheirOwnDeployment: the error pages run as `stackdome
// serve --hooks=false` in a Deployment of their own, with their own replicas
// and resources and GOMEMLIMIT from their own limit; the error-page Service
// selects those pods and never the hooks', so a hook replica killed for its
// memory takes no page down (issue 25). Without error pages, no such
// Deployment.
func TestErrorPagesHaveTheirOwnDeployment(t *testing.T) {
	objs := decode(t, render(t, install{set: []string{"errorPages.replicaCount=3", "errorPages.resources.limits.memory=96Mi"}}))
	d := findPages[*appsv1.Deployment](t, objs, "Deployment")
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("replicas = %v, want errorPages.replicaCount", d.Spec.Replicas)
	}
	c := d.Spec.Template.Spec.Containers[0]
	wantArgs := []string{"--hooks=false", "--listen=:8080", "--error-pages-listen=:8082", "--metrics-listen=:8081",
		"--log-format=json", "--log-level=info", "--drain-delay=5s", "--shutdown-timeout=25s"}
	if diff := cmp.Diff(wantArgs, c.Args); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
	hooks := find[*appsv1.Deployment](t, objs, "Deployment").Spec.Template.Spec.Containers[0]
	if c.Image != hooks.Image {
		t.Errorf("image %s, the hooks' is %s: want the same image", c.Image, hooks.Image)
	}
	if got := c.Resources.Limits.Memory(); got.Cmp(resource.MustParse("96Mi")) != 0 {
		t.Errorf("memory limit %s, want errorPages.resources'", got)
	}
	wantEnv := []corev1.EnvVar{
		{Name: "GOMAXPROCS", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "requests.cpu", Divisor: resource.MustParse("1")}}},
		{Name: "GOMEMLIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "limits.memory", Divisor: resource.MustParse("1")}}},
	}
	if diff := cmp.Diff(wantEnv, c.Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	svc := findNamed[*corev1.Service](t, objs, "Service", "stackdome-error-pages")
	sel := labels.SelectorFromSet(svc.Spec.Selector)
	if !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		t.Error("the error-page Service does not select the error-page pods")
	}
	if sel.Matches(labels.Set(find[*appsv1.Deployment](t, objs, "Deployment").Spec.Template.Labels)) {
		t.Error("the error-page Service selects the hooks' pods")
	}

	for _, o := range decode(t, render(t, install{set: []string{"errorPages.enabled=false"}})) {
		if isPages(o) {
			t.Errorf("error pages off, yet %s", o.id())
		}
	}
}
