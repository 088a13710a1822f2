//go:build e2e

package e2e

import (
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestHookOutputStoredAsSent proves, for every golden sync response and every
// scenario step, that a real kube-apiserver stores each child and the status
// exactly as stackdome returns them:
//
//   - each child, applied the way Metacontroller applies it (server-side
//     apply, fieldManager=metacontroller, force, controller-uid label and a
//     controllerRef to the parent), reads back holding every field we sent
//     with the value we sent — else Metacontroller updates it on every sync
//     (metacontroller/metacontroller@v4.17.2 pkg/dynamic/apply/apply.go:
//     server defaulting inside atomic lists, cpu "0.5" → "500m", dropped
//     nulls) — and applying it again is a no-op;
//   - the status, written through /status of a real StackResource with
//     observedGeneration set as Metacontroller sets it, reads back equal —
//     else Metacontroller writes status on every sync (metacontroller/metacontroller@v4.17.2
//     pkg/controller/composite/controller.go, updateParentStatus: pruned fields,
//     dropped nulls, integers that turn into floats).
func TestHookOutputStoredAsSent(t *testing.T) {
	f := framework.NewFixture(t)
	f.RequireStackResourceCRD()
	cases, skipped, err := framework.SyncCases(f.Root)
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) > 0 {
		t.Logf("scenarios without hook responses, nothing to apply: %v", skipped)
	}
	if len(cases) == 0 {
		t.Skip("no testdata/sync/*.response.json and no testdata/scenarios/*.json yet")
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			f := framework.NewFixture(t) // a namespace of this case's own
			var parent obj               // the live StackResource
			for _, step := range c.Steps {
				t.Run(step.Name, func(t *testing.T) {
					if parent == nil {
						parent = f.CreateParent(t, step.Parent)
					}
					children, _ := step.Response["children"].([]any)
					for _, child := range children {
						child, ok := child.(map[string]any)
						if !ok {
							t.Errorf("child is not an object: %v", child)
							continue
						}
						f.CheckChildStored(t, parent, child)
					}
					status, ok := step.Response["status"].(map[string]any)
					if !ok {
						t.Fatalf("response status is %T, want an object: a null status wipes the parent's", step.Response["status"])
					}
					parent = f.CheckStatusStored(t, parent, status)
				})
			}
		})
	}
}

// TestStatusCheckBites shows the status proof fails on the faults it exists
// for: a field the CRD schema prunes and a null it drops.
func TestStatusCheckBites(t *testing.T) {
	f := framework.NewFixture(t)
	f.RequireStackResourceCRD()
	parent := f.CreateParent(t, obj{"metadata": obj{"name": "bites"}, "spec": obj{"type": "Service", "image": "example.invalid/app:1"}})
	for name, status := range map[string]obj{
		"pruned field": {"revision": "abc", "notInSchema": "x"},
		"dropped null": {"revision": "abc", "url": nil},
	} {
		t.Run(name, func(t *testing.T) {
			sent, stored, err := f.WriteStatus(t.Context(), parent, status)
			if err != nil {
				t.Fatal(err)
			}
			if framework.StatusDiff(sent, stored["status"]) == nil {
				t.Errorf("status %v stored as sent; the CRD should have pruned or dropped part of it", status)
			}
		})
	}
}
