package status

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/schema"
)

// TestEqualStatus: equalStatus says two statuses are equal exactly when the
// API server would store the same bytes (observedGeneration aside): every
// golden status equals itself read back, and a change to any one field is
// seen.
func TestEqualStatus(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "sync", "*.response.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden responses: %v", err)
	}
	var rich schema.Status // the golden status with the most in it
	for _, p := range paths {
		var resp struct{ Status schema.Status }
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &resp); err != nil {
			t.Fatal(err)
		}
		again := resp.Status
		again.ObservedGeneration++
		if !equalStatus(resp.Status, again) {
			t.Errorf("%s: a status is not equal to itself", filepath.Base(p))
		}
		if len(resp.Status.LastFailureDetails) > 0 && resp.Status.PortCheck != nil && len(resp.Status.Ports) > 0 {
			rich = resp.Status
		}
	}
	if rich.PortCheck == nil {
		t.Fatal("no golden status with details, portCheck and ports")
	}
	later := metav1.NewTime(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	micro := metav1.NewMicroTime(time.Date(2030, 1, 1, 0, 0, 0, 1000, time.UTC))
	edits := map[string]func(s *schema.Status){
		"revision":                 func(s *schema.Status) { s.Revision += "x" },
		"url":                      func(s *schema.Status) { s.URL += "x" },
		"a condition's reason":     func(s *schema.Status) { s.Conditions[1].Reason += "x" },
		"a condition's message":    func(s *schema.Status) { s.Conditions[2].Message += "x" },
		"a condition's time":       func(s *schema.Status) { s.Conditions[0].LastTransitionTime = later },
		"a condition more":         func(s *schema.Status) { s.Conditions = append(s.Conditions, s.Conditions[0]) },
		"a detail's observedAt":    func(s *schema.Status) { s.LastFailureDetails[0].ObservedAt = &later },
		"a detail's exit code":     func(s *schema.Status) { s.LastFailureDetails[0].ExitCode = new(int32(9)) },
		"a detail's revision":      func(s *schema.Status) { s.LastFailureDetails[0].Revision += "x" },
		"a port's state":           func(s *schema.Status) { s.Ports[0].State = "Unknown" + s.Ports[0].State },
		"a port's message":         func(s *schema.Status) { s.Ports[0].Message += "x" },
		"portCheck's revision":     func(s *schema.Status) { s.PortCheck.Revision += "x" },
		"portCheck's checkedAt":    func(s *schema.Status) { s.PortCheck.CheckedAt = &micro },
		"portCheck's failingSince": func(s *schema.Status) { s.PortCheck.FailingSince = &later },
		"no portCheck":             func(s *schema.Status) { s.PortCheck = nil },
	}
	for name, edit := range edits {
		var s schema.Status
		b, _ := json.Marshal(rich)
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		edit(&s)
		if equalStatus(rich, s) {
			t.Errorf("%s changed, equalStatus says equal", name)
		}
	}
}
