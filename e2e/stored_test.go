//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
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
	requireStackResourceCRD(t)
	cases, skipped, err := syncCases()
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
		t.Run(c.name, func(t *testing.T) {
			ns := newNamespace(t)
			var parent obj // the live StackResource
			for _, step := range c.steps {
				t.Run(step.name, func(t *testing.T) {
					if parent == nil {
						parent = createParent(t, ns, step.parent)
					}
					children, _ := step.response["children"].([]any)
					for _, child := range children {
						child, ok := child.(map[string]any)
						if !ok {
							t.Errorf("child is not an object: %v", child)
							continue
						}
						checkChildStored(t, ns, parent, child)
					}
					status, ok := step.response["status"].(map[string]any)
					if !ok {
						t.Fatalf("response status is %T, want an object: a null status wipes the parent's", step.response["status"])
					}
					parent = checkStatusStored(t, parent, status)
				})
			}
		})
	}
}

// TestStatusCheckBites shows the status proof fails on the faults it exists
// for: a field the CRD schema prunes and a null it drops.
func TestStatusCheckBites(t *testing.T) {
	requireStackResourceCRD(t)
	ns := newNamespace(t)
	parent := createParent(t, ns, obj{"metadata": obj{"name": "bites"}, "spec": obj{"type": "Service", "image": "example.invalid/app:1"}})
	for name, status := range map[string]obj{
		"pruned field": {"revision": "abc", "notInSchema": "x"},
		"dropped null": {"revision": "abc", "url": nil},
	} {
		t.Run(name, func(t *testing.T) {
			sent, stored, err := writeStatus(t.Context(), parent, status)
			if err != nil {
				t.Fatal(err)
			}
			if statusDiff(sent, stored["status"]) == nil {
				t.Errorf("status %v stored as sent; the CRD should have pruned or dropped part of it", status)
			}
		})
	}
}

// createParent creates the StackResource a request's parent describes, in ns.
// A spec the CRD rejects (fixtures of "invalid spec slipped past admission")
// is replaced by a minimal valid one: /status and children do not depend on it.
func createParent(t *testing.T, ns string, reqParent obj) obj {
	t.Helper()
	k := suite.cluster.Kube
	name, _ := framework.Dig(reqParent, "metadata", "name").(string)
	if name == "" {
		t.Fatal("request has no parent.metadata.name")
	}
	meta := obj{"name": name}
	if labels, ok := framework.Dig(reqParent, "metadata", "labels").(map[string]any); ok {
		meta["labels"] = labels
	}
	path := "/apis/stackdome.io/v1alpha1/namespaces/" + ns + "/stackresources"
	body := obj{"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource", "metadata": meta, "spec": reqParent["spec"]}
	created, err := k.Create(t.Context(), path, body)
	if framework.IsCode(err, 422) {
		t.Logf("parent spec rejected at admission, using a minimal valid spec for children and status: %v", err)
		body["spec"] = obj{"type": "Service", "image": "example.invalid/app:1"}
		created, err = k.Create(t.Context(), path, body)
	}
	if err != nil {
		t.Fatalf("creating parent: %v", err)
	}
	return created
}

// checkChildStored applies child as Metacontroller would and compares.
func checkChildStored(t *testing.T, ns string, parent, child obj) {
	t.Helper()
	ctx := t.Context()
	k := suite.cluster.Kube
	kind, _ := child["kind"].(string)
	name, _ := framework.Dig(child, "metadata", "name").(string)
	t.Run(kind+"/"+name, func(t *testing.T) {
		sent := asMetacontrollerApplies(child, ns, parent)
		path, err := k.ObjectPath(ctx, sent, ns)
		if err != nil {
			t.Fatal(err)
		}
		applied, err := k.Apply(ctx, path, sent)
		if err != nil {
			t.Fatalf("server-side apply rejected: %v", err)
		}
		stored, err := k.Get(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if p, why := firstLoop("", sent, stored); p != "" {
			t.Errorf("%s %s: stored differs at %s: %s — Metacontroller would update this child on every sync", kind, name, p, why)
			t.Logf("sent:\n%s\nstored:\n%s", mustJSON(sent), mustJSON(stored))
		}
		again, err := k.Apply(ctx, path, sent)
		if err != nil {
			t.Fatalf("second apply: %v", err)
		}
		if changedByApply(applied, again) {
			t.Errorf("%s %s: applying the same object again changed it (generation %v → %v, resourceVersion %v → %v)", kind, name,
				framework.Dig(applied, "metadata", "generation"), framework.Dig(again, "metadata", "generation"),
				framework.Dig(applied, "metadata", "resourceVersion"), framework.Dig(again, "metadata", "resourceVersion"))
		}
	})
}

// asMetacontrollerApplies returns the object Metacontroller's server-side
// apply sends for a desired child: the parent's namespace, the controller-uid
// label of generateSelector, and a controllerRef to the parent.
func asMetacontrollerApplies(child obj, ns string, parent obj) obj {
	out := deepCopy(child).(map[string]any)
	meta, _ := out["metadata"].(map[string]any)
	if meta == nil {
		meta = obj{}
		out["metadata"] = meta
	}
	meta["namespace"] = ns
	labels, _ := meta["labels"].(map[string]any)
	labels = maps.Clone(labels)
	if labels == nil {
		labels = obj{}
	}
	labels["controller-uid"] = framework.Dig(parent, "metadata", "uid")
	meta["labels"] = labels
	meta["ownerReferences"] = []any{obj{
		"apiVersion":         parent["apiVersion"],
		"kind":               parent["kind"],
		"name":               framework.Dig(parent, "metadata", "name"),
		"uid":                framework.Dig(parent, "metadata", "uid"),
		"controller":         true,
		"blockOwnerDeletion": true,
	}}
	return out
}

// checkStatusStored writes status as Metacontroller does and requires the
// stored status to equal it exactly; it returns the updated parent.
func checkStatusStored(t *testing.T, parent, status obj) obj {
	t.Helper()
	sent, stored, err := writeStatus(t.Context(), parent, status)
	if err != nil {
		t.Fatal(err)
	}
	if err := statusDiff(sent, stored["status"]); err != nil {
		t.Errorf("%v — Metacontroller would write status on every sync", err)
	}
	return stored
}

// writeStatus replaces the live parent's status whole, with
// observedGeneration forced to metadata.generation, through /status — what
// Metacontroller does — and reads the parent back.
func writeStatus(ctx context.Context, parent, status obj) (sent, stored obj, err error) {
	k := suite.cluster.Kube
	path := "/apis/stackdome.io/v1alpha1/namespaces/" + framework.Dig(parent, "metadata", "namespace").(string) +
		"/stackresources/" + framework.Dig(parent, "metadata", "name").(string)
	live, err := k.Get(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	sent = deepCopy(status).(map[string]any)
	sent["observedGeneration"] = framework.Dig(live, "metadata", "generation")
	live["status"] = sent
	if _, err := k.Put(ctx, path+"/status", live); err != nil {
		return nil, nil, fmt.Errorf("writing status: %w", err)
	}
	stored, err = k.Get(ctx, path)
	return sent, stored, err
}

// statusDiff is nil when the stored status equals the sent one exactly.
func statusDiff(sent obj, stored any) error {
	if p, why := firstMismatch("status", sent, stored); p != "" {
		return fmt.Errorf("stored status differs at %s: %s", p, why)
	}
	if p, _ := firstMismatch("status", stored, sent); p != "" {
		return fmt.Errorf("the server added %s to the status", p)
	}
	return nil
}

// deepCopy copies decoded JSON.
func deepCopy(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("copying JSON value: %v", err)) // decoded JSON always encodes
	}
	var out any
	if err := decodeJSON(data, &out); err != nil {
		panic(err)
	}
	return out
}

// changedByApply reports whether a write changed what the hook owns.
// Workloads' resourceVersion also moves with kube-controller-manager's
// status writes, so kinds with a generation (which moves only with spec) are
// judged by it; the others have no writer but the test here.
func changedByApply(before, after obj) bool {
	field := "generation"
	if framework.Dig(before, "metadata", "generation") == nil {
		field = "resourceVersion"
	}
	return framework.Dig(before, "metadata", field) != framework.Dig(after, "metadata", field)
}

// mustJSON is v as indented JSON, or as fmt prints it if it has none.
func mustJSON(v any) string {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
