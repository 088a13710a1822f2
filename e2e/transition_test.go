//go:build e2e

package e2e

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestAdmissionTransitions proves the CRD's CEL transition rules on a real
// API server: an edit the children cannot take — the type, the storage that
// becomes a StatefulSet's volumeClaimTemplates — is refused with 422 and a
// message saying what to do instead, and nothing is stored; every other edit
// of the same object, and a size written differently but equal, is accepted.
func TestAdmissionTransitions(t *testing.T) {
	f := framework.NewFixture(t)
	f.RequireStackResourceCRD()
	ns := f.Namespace
	k := f.Kube
	base := "/apis/stackdome.io/v1alpha1/namespaces/" + ns + "/stackresources"
	create := func(name string, spec obj) {
		t.Helper()
		if _, err := k.Create(t.Context(), base, obj{"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource",
			"metadata": obj{"name": name}, "spec": spec}); err != nil {
			t.Fatalf("creating %s: %v", name, err)
		}
	}
	create("db", obj{"type": "StatefulService", "image": "example.invalid/db:1", "ports": []any{obj{"name": "pg", "port": 5432}},
		"storage": obj{"size": "1Gi", "mountPath": "/data", "storageClassName": "standard"}})
	create("plain", obj{"type": "StatefulService", "image": "example.invalid/plain:1"})
	create("web", obj{"type": "Service", "image": "example.invalid/web:1"})

	cases := map[string]struct {
		name  string
		patch obj
		want  []string // fragments of the refusal; none = accepted
	}{
		"storage.size grows":           {name: "db", patch: obj{"spec": obj{"storage": obj{"size": "2Gi"}}}, want: []string{"spec.storage.size cannot change", "kubectl patch pvc data-<name>-<ordinal>", "allow volume expansion"}},
		"storage.size shrinks":         {name: "db", patch: obj{"spec": obj{"storage": obj{"size": "512Mi"}}}, want: []string{"spec.storage.size cannot change"}},
		"storage.size written as Mi":   {name: "db", patch: obj{"spec": obj{"storage": obj{"size": "1024Mi"}}}},
		"storageClassName changes":     {name: "db", patch: obj{"spec": obj{"storage": obj{"storageClassName": "fast"}}}, want: []string{"spec.storage.storageClassName cannot change"}},
		"storageClassName removed":     {name: "db", patch: obj{"spec": obj{"storage": obj{"storageClassName": nil}}}, want: []string{"spec.storage.storageClassName cannot change"}},
		"storage removed":              {name: "db", patch: obj{"spec": obj{"storage": nil}}, want: []string{"spec.storage cannot be added or removed", "Create a new StackResource"}},
		"storage added":                {name: "plain", patch: obj{"spec": obj{"storage": obj{"size": "1Gi", "mountPath": "/data"}}}, want: []string{"spec.storage cannot be added or removed"}},
		"type StatefulService→Service": {name: "plain", patch: obj{"spec": obj{"type": "Service"}}, want: []string{"spec.type cannot change", "Create a new StackResource of the other type"}},
		"type Service→StatefulService": {name: "web", patch: obj{"spec": obj{"type": "StatefulService"}}, want: []string{"spec.type cannot change"}},
		"mountPath changes":            {name: "db", patch: obj{"spec": obj{"storage": obj{"mountPath": "/var/lib/data"}}}},
		"image and ports change":       {name: "db", patch: obj{"spec": obj{"image": "example.invalid/db:2", "ports": []any{obj{"name": "pg", "port": 5433}}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := base + "/" + tc.name
			before, err := k.Get(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = k.MergePatch(t.Context(), path+"?dryRun=All", tc.patch)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("edit refused: %v", err)
				}
				return
			}
			var ae *framework.APIError
			if !errors.As(err, &ae) {
				t.Fatalf("edit accepted, want a refusal mentioning %q (err %v)", tc.want, err)
			}
			if ae.Code != http.StatusUnprocessableEntity || ae.Reason != "Invalid" {
				t.Errorf("refused with %d %s, want 422 Invalid", ae.Code, ae.Reason)
			}
			for _, frag := range tc.want {
				if !strings.Contains(ae.Message, frag) {
					t.Errorf("message %q lacks %q", ae.Message, frag)
				}
			}
			after, err := k.Get(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			if framework.Dig(after, "metadata", "resourceVersion") != framework.Dig(before, "metadata", "resourceVersion") {
				t.Errorf("a refused edit changed the object")
			}
		})
	}
}
