//go:build e2e

package e2e

import "testing"

// TestAdmissionConfigFields proves the CRD admits rollOnChange on files,
// envFrom and env entries of #20 item 2, with the core fields' wire format
// unchanged, and refuses what it can refuse at admission in words a user
// understands: a wrong type, the digest annotation set by hand, a file of
// two sources. What the CRD cannot say (an envFrom entry without a source,
// rollOnChange on a literal env var) is refused by Validate as InvalidSpec
// (schema/twodoors_test.go, the rules marked goOnly).
func TestAdmissionConfigFields(t *testing.T) {
	requireStackResourceCRD(t)
	ns := newNamespace(t)
	path := "/apis/stackdome.io/v1alpha1/namespaces/" + ns + "/stackresources?dryRun=All"
	with := specWith
	cases := map[string]admissionCase{
		"rollOnChange on each kind of reference": {spec: with(obj{
			"files":   []any{obj{"name": "config", "mountPath": "/etc/app", "configMap": obj{"name": "c"}, "rollOnChange": false}},
			"envFrom": []any{obj{"configMapRef": obj{"name": "flags"}, "prefix": "FLAG_", "rollOnChange": false}, obj{"secretRef": obj{"name": "db"}}},
			"env": []any{obj{"name": "A", "value": "v"},
				obj{"name": "B", "valueFrom": obj{"secretKeyRef": obj{"name": "db", "key": "password", "optional": true}}, "rollOnChange": true}},
		})},
		"references without rollOnChange, as before": {spec: with(obj{
			"envFrom": []any{obj{"configMapRef": obj{"name": "c"}}},
			"env":     []any{obj{"name": "B", "valueFrom": obj{"configMapKeyRef": obj{"name": "c", "key": "k"}}}},
		})},
		"rollOnChange as a string": {
			spec: with(obj{"envFrom": []any{obj{"configMapRef": obj{"name": "c"}, "rollOnChange": "false"}}}),
			want: []string{"rollOnChange", "boolean"},
		},
		"rollOnChange on a file as a number": {
			spec: with(obj{"files": []any{obj{"name": "f", "mountPath": "/f", "secret": obj{"secretName": "s"}, "rollOnChange": 0}}}),
			want: []string{"rollOnChange", "boolean"},
		},
		"the digest annotation by hand": {
			spec: with(obj{"podAnnotations": obj{"stackdome.io/config-digest": "x"}}),
			want: []string{"podAnnotations cannot set stackdome.io/config-digest"},
		},
		"envFrom as an object": {
			spec: with(obj{"envFrom": obj{"configMapRef": obj{"name": "c"}}}),
			want: []string{"envFrom", "array"},
		},
	}
	tryAdmission(t, path, cases)
}
