//go:build e2e

package framework

import (
	"errors"
	"maps"
	"net/http"
	"strings"
	"testing"
)

// Admission of StackResources: specs to try and the API server's refusals.

// AdmissionCase is a spec tried at admission and fragments of the API
// server's message refusing it; none: it is admitted.
type AdmissionCase struct {
	Spec Obj
	Want []string
}

// SpecWith is a valid spec (a Service of one port) with edits over it; an
// edit to nil removes the field.
func SpecWith(edits Obj) Obj {
	s := Obj{"type": "Service", "image": "example.invalid/app:1", "ports": []any{Obj{"name": "http", "port": 8080}}}
	maps.Copy(s, edits)
	for key, v := range edits {
		if v == nil {
			delete(s, key)
		}
	}
	return s
}

// TryAdmission creates, at the collection path (a dry run), a StackResource
// "bad" of each case's spec, and checks the refusal or admission it wants.
func (f *Fixture) TryAdmission(path string, cases map[string]AdmissionCase) {
	t := f.t
	t.Helper()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := f.Kube.Create(t.Context(), path, Obj{
				"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource",
				"metadata": Obj{"name": "bad"}, "spec": tc.Spec,
			})
			CheckRefusal(t, err, tc.Want)
		})
	}
}

// CheckRefusal fails unless err is the API server's 422 Invalid whose message
// holds every fragment of want, or, with want empty, unless err is nil.
func CheckRefusal(t *testing.T, err error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("valid object rejected: %v", err)
		}
		return
	}
	var ae *APIError
	if !errors.As(err, &ae) {
		t.Fatalf("accepted, want rejection mentioning %q (err %v)", want, err)
	}
	if ae.Code != http.StatusUnprocessableEntity || ae.Reason != "Invalid" {
		t.Errorf("rejected with %d %s, want 422 Invalid", ae.Code, ae.Reason)
	}
	for _, frag := range want {
		if !strings.Contains(ae.Message, frag) {
			t.Errorf("message %q lacks %q", ae.Message, frag)
		}
	}
}
