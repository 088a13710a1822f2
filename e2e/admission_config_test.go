//go:build e2e

package e2e

import (
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestAdmissionConfigFields proves the CRD admits rollOnChange on files,
// envFrom and env entries of #20 item 2, with the core fields' wire format
// unchanged, and refuses what it can refuse at admission in words a user
// understands: a wrong type, the digest annotation set by hand, a file of
// two sources. What the CRD cannot say (an envFrom entry without a source,
// rollOnChange on a literal env var) is refused by Validate as InvalidSpec
// (schema/twodoors_test.go, the rules marked goOnly).
func TestAdmissionConfigFields(t *testing.T) {
	f := framework.NewFixture(t)
	f.RequireStackResourceCRD()
	ns := f.Namespace
	path := "/apis/stackdome.io/v1alpha1/namespaces/" + ns + "/stackresources?dryRun=All"
	with := framework.SpecWith
	cases := map[string]framework.AdmissionCase{
		"rollOnChange on each kind of reference": {Spec: with(obj{
			"files":   []any{obj{"name": "config", "mountPath": "/etc/app", "configMap": obj{"name": "c"}, "rollOnChange": false}},
			"envFrom": []any{obj{"configMapRef": obj{"name": "flags"}, "prefix": "FLAG_", "rollOnChange": false}, obj{"secretRef": obj{"name": "db"}}},
			"env": []any{obj{"name": "A", "value": "v"},
				obj{"name": "B", "valueFrom": obj{"secretKeyRef": obj{"name": "db", "key": "password", "optional": true}}, "rollOnChange": true}},
		})},
		"references without rollOnChange, as before": {Spec: with(obj{
			"envFrom": []any{obj{"configMapRef": obj{"name": "c"}}},
			"env":     []any{obj{"name": "B", "valueFrom": obj{"configMapKeyRef": obj{"name": "c", "key": "k"}}}},
		})},
		"rollOnChange as a string": {
			Spec: with(obj{"envFrom": []any{obj{"configMapRef": obj{"name": "c"}, "rollOnChange": "false"}}}),
			Want: []string{"rollOnChange", "boolean"},
		},
		"rollOnChange on a file as a number": {
			Spec: with(obj{"files": []any{obj{"name": "f", "mountPath": "/f", "secret": obj{"secretName": "s"}, "rollOnChange": 0}}}),
			Want: []string{"rollOnChange", "boolean"},
		},
		"the digest annotation by hand": {
			Spec: with(obj{"podAnnotations": obj{"stackdome.io/config-digest": "x"}}),
			Want: []string{"podAnnotations cannot set stackdome.io/config-digest"},
		},
		"envFrom as an object": {
			Spec: with(obj{"envFrom": obj{"configMapRef": obj{"name": "c"}}}),
			Want: []string{"envFrom", "array"},
		},
	}
	f.TryAdmission(path, cases)
}
