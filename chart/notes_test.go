package chart

import (
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestNotesPointAtThePods: the commands NOTES give for pods that do not
// start (they show in `helm status`) select exactly this release's
// stackdome pods, in its namespace, and name the image the Deployment pulls.
func TestNotesPointAtThePods(t *testing.T) {
	for name, in := range renderCases {
		t.Run(name, func(t *testing.T) {
			d := find[*appsv1.Deployment](t, decode(t, render(t, in)), "Deployment")
			got := notes(t, in)

			cmds := regexp.MustCompile(`kubectl -n (\S+) (?:get|describe) pods -l (\S+)`).FindAllStringSubmatch(got, -1)
			if len(cmds) != 2 {
				t.Fatalf("want a get and a describe of the pods in NOTES, got %q:\n%s", cmds, got)
			}
			for _, c := range cmds {
				if c[1] != d.Namespace {
					t.Errorf("%q looks in namespace %s, the pods are in %s", c[0], c[1], d.Namespace)
				}
				sel, err := labels.Parse(c[2])
				if err != nil {
					t.Fatalf("%q: %v", c[0], err)
				}
				if !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
					t.Errorf("%q does not select the pods (labels %v)", c[0], d.Spec.Template.Labels)
				}
				// The children of StackResources carry name and instance
				// labels too; the component label keeps them out.
				child := labels.Set{"app.kubernetes.io/name": "stackdome", "app.kubernetes.io/instance": d.Spec.Template.Labels["app.kubernetes.io/instance"]}
				if sel.Matches(child) {
					t.Errorf("%q also selects pods that are not stackdome's", c[0])
				}
			}
			m := regexp.MustCompile(`release pulls\n +(\S+)\n`).FindStringSubmatch(got)
			if m == nil {
				t.Fatalf("NOTES name no image:\n%s", got)
			}
			if diff := cmp.Diff(d.Spec.Template.Spec.Containers[0].Image, m[1]); diff != "" {
				t.Errorf("image in NOTES (-pulled +named):\n%s", diff)
			}
		})
	}
}
