package children

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackdome/stackdome/hooks/internal/observed"
)

// TestKeepRunningTrustsOnlyTheChildsOwnAnnotation: a child is rebuilt
// from its last-applied annotation only when the annotation is one JSON
// object naming that very child (#25: an edited name made Metacontroller
// delete the running Deployment).
func TestKeepRunningTrustsOnlyTheChildsOwnAnnotation(t *testing.T) {
	const dep = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"billing","namespace":"finance"}}`
	tests := map[string]struct {
		reason  string
		group   string
		config  string
		wantErr string // "" keeps the child as the annotation says
	}{
		"its own":               {"the annotation Metacontroller wrote", "Deployment.apps/v1", dep, ""},
		"white space after":     {"json.Marshal's output plus a newline is still one object", "Deployment.apps/v1", dep + "\n \t", ""},
		"no namespace":          {"a namespace left to the API server's default", "Deployment.apps/v1", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"billing"}}`, ""},
		"empty namespace":       {"empty is the default namespace, not another", "Deployment.apps/v1", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"billing","namespace":""}}`, ""},
		"core group":            {"Service.v1 is apiVersion v1", "Service.v1", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"billing"}}`, ""},
		"another name":          {"Metacontroller would delete billing and create other", "Deployment.apps/v1", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"other"}}`, "names apps/v1/Deployment other, not the observed apps/v1/Deployment billing"},
		"no name":               {"a child without a name is not billing", "Deployment.apps/v1", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{}}`, "names apps/v1/Deployment <nil>, not the observed apps/v1/Deployment billing"},
		"no metadata":           {"nor one without metadata", "Deployment.apps/v1", `{"apiVersion":"apps/v1","kind":"Deployment"}`, "names apps/v1/Deployment <nil>, not the observed"},
		"name not a string":     {"a name of another type is not billing", "Deployment.apps/v1", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":["billing"]}}`, "names apps/v1/Deployment [billing], not the observed"},
		"another kind":          {"a StatefulSet returned for a Deployment deletes the Deployment", "Deployment.apps/v1", `{"apiVersion":"apps/v1","kind":"StatefulSet","metadata":{"name":"billing"}}`, "names apps/v1/StatefulSet billing, not the observed apps/v1/Deployment billing"},
		"another version":       {"Metacontroller keys groups by apiVersion", "Deployment.apps/v1", `{"apiVersion":"apps/v1beta2","kind":"Deployment","metadata":{"name":"billing"}}`, "names apps/v1beta2/Deployment billing"},
		"another namespace":     {"a child in another namespace is another child", "Deployment.apps/v1", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"billing","namespace":"payroll"}}`, `names namespace payroll, not the observed "finance"`},
		"a second object after": {"trailing data is refused, not ignored", "Deployment.apps/v1", dep + `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"other"}}`, "data after the JSON object at offset 96"},
		"garbage after":         {"anything after the object", "Deployment.apps/v1", dep + `x`, "data after the JSON object"},
		"two closing braces":    {"a stray brace", "Deployment.apps/v1", dep + `}`, "data after the JSON object"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := KeepRunning([]observed.LastApplied{{Group: tc.group, Key: "finance/billing", Name: "billing", Namespace: "finance", Config: tc.config, Found: true}})
			if tc.wantErr != "" {
				if err == nil {
					t.Fatalf("%s: kept %v", tc.reason, got)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("%s: error %q, want it to say %q", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			var want any
			dec := json.NewDecoder(strings.NewReader(tc.config))
			dec.UseNumber()
			if err := dec.Decode(&want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]any{want}, got); diff != "" {
				t.Fatalf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
