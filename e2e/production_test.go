//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestRestrictedNamespaceAdmitsPods: Pod Security admission, enforced by the
// API server itself, admits in a namespace labelled
// pod-security.kubernetes.io/enforce=restricted the pod of every workload
// stackdome returns for the golden requests — its defaults meet "restricted",
// and a spec that relaxes a field (security-relaxed) stays inside it. The
// same pod with runAsNonRoot turned off is refused: the check is live.
func TestRestrictedNamespaceAdmitsPods(t *testing.T) {
	f := framework.NewFixture(t)
	ns := f.Namespace
	k := f.Kube
	if _, err := k.MergePatch(t.Context(), "/api/v1/namespaces/"+ns, obj{"metadata": obj{"labels": obj{
		"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest"}}}); err != nil {
		t.Fatal(err)
	}
	paths, err := filepath.Glob(filepath.Join(f.Root, "testdata", "sync", "*.response.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden responses: %v", err)
	}
	create := func(name string, podSpec any) error {
		_, err := k.Create(t.Context(), "/api/v1/namespaces/"+ns+"/pods?dryRun=All", obj{
			"apiVersion": "v1", "kind": "Pod", "metadata": obj{"name": name}, "spec": podSpec})
		return err
	}
	var checked int
	for _, path := range paths {
		var resp struct {
			Children []obj `json:"children"`
		}
		if err := framework.ReadJSON(path, &resp); err != nil {
			t.Fatal(err)
		}
		for _, c := range resp.Children {
			tmpl := []string{"spec", "template", "spec"}
			switch c["kind"] {
			case "Deployment", "StatefulSet", "Job":
			case "CronJob":
				tmpl = []string{"spec", "jobTemplate", "spec", "template", "spec"}
			default:
				continue
			}
			name := strings.TrimSuffix(filepath.Base(path), ".response.json")
			t.Run(name, func(t *testing.T) {
				spec := framework.DeepCopy(framework.Dig(c, tmpl...)).(map[string]any)
				// What the StatefulSet controller adds: a volume per claim template.
				claims, _ := framework.Dig(c, "spec", "volumeClaimTemplates").([]any)
				for _, ct := range claims {
					vols, _ := spec["volumes"].([]any)
					cn := framework.Dig(ct, "metadata", "name")
					spec["volumes"] = append(vols, obj{"name": cn, "persistentVolumeClaim": obj{"claimName": fmt.Sprint(cn, "-p")}})
				}
				if sa, ok := spec["serviceAccountName"].(string); ok {
					if _, err := k.Create(t.Context(), "/api/v1/namespaces/"+ns+"/serviceaccounts", obj{"metadata": obj{"name": sa}}); err != nil && !framework.IsCode(err, http.StatusConflict) {
						t.Fatal(err)
					}
				}
				if err := create("p", spec); err != nil {
					t.Fatalf("the pod of %s is refused in a restricted namespace: %v", name, err)
				}
				checked++
				// A live check: the same pod, run as root, is refused.
				spec["securityContext"].(map[string]any)["runAsNonRoot"] = false
				err := create("p", spec)
				var ae *framework.APIError
				if !errors.As(err, &ae) || ae.Code != http.StatusForbidden || !strings.Contains(ae.Message, "violates PodSecurity") {
					t.Fatalf("runAsNonRoot=false admitted in a restricted namespace (err %v): Pod Security is not enforced", err)
				}
			})
		}
	}
	if checked < 20 {
		t.Fatalf("only %d workloads checked", checked)
	}
}
