//go:build e2e

package framework

import (
	"context"
	"fmt"
	"maps"
	"testing"
)

// Writing hook output as Metacontroller does (children by server-side apply,
// status through /status) and comparing what the API server stored.

// CreateParent creates the StackResource a request's parent describes, in
// the fixture's namespace; a failure fails t (the test or subtest calling).
// A spec the CRD rejects (fixtures of "invalid spec slipped past admission")
// is replaced by a minimal valid one: /status and children do not depend on it.
func (f *Fixture) CreateParent(t *testing.T, reqParent Obj) Obj {
	ns, k := f.Namespace, f.Kube
	t.Helper()
	name, _ := Dig(reqParent, "metadata", "name").(string)
	if name == "" {
		t.Fatal("request has no parent.metadata.name")
	}
	meta := Obj{"name": name}
	if labels, ok := Dig(reqParent, "metadata", "labels").(map[string]any); ok {
		meta["labels"] = labels
	}
	path := "/apis/stackdome.io/v1alpha1/namespaces/" + ns + "/stackresources"
	body := Obj{"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource", "metadata": meta, "spec": reqParent["spec"]}
	created, err := k.Create(t.Context(), path, body)
	if IsCode(err, 422) {
		t.Logf("parent spec rejected at admission, using a minimal valid spec for children and status: %v", err)
		body["spec"] = Obj{"type": "Service", "image": "example.invalid/app:1"}
		created, err = k.Create(t.Context(), path, body)
	}
	if err != nil {
		t.Fatalf("creating parent: %v", err)
	}
	return created
}

// CheckChildStored applies child as Metacontroller would
// (AsMetacontrollerApplies) in the fixture's namespace, in a subtest of t
// named kind/name, and fails it unless the stored child is what was sent
// (FirstLoop) and applying it again changes nothing (ChangedByApply).
func (f *Fixture) CheckChildStored(t *testing.T, parent, child Obj) {
	ns, k := f.Namespace, f.Kube
	t.Helper()
	ctx := t.Context()
	kind, _ := child["kind"].(string)
	name, _ := Dig(child, "metadata", "name").(string)
	t.Run(kind+"/"+name, func(t *testing.T) {
		sent := AsMetacontrollerApplies(child, ns, parent)
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
		if p, why := FirstLoop("", sent, stored); p != "" {
			t.Errorf("%s %s: stored differs at %s: %s — Metacontroller would update this child on every sync", kind, name, p, why)
			t.Logf("sent:\n%s\nstored:\n%s", MustJSON(sent), MustJSON(stored))
		}
		again, err := k.Apply(ctx, path, sent)
		if err != nil {
			t.Fatalf("second apply: %v", err)
		}
		if ChangedByApply(applied, again) {
			t.Errorf("%s %s: applying the same object again changed it (generation %v → %v, resourceVersion %v → %v)", kind, name,
				Dig(applied, "metadata", "generation"), Dig(again, "metadata", "generation"),
				Dig(applied, "metadata", "resourceVersion"), Dig(again, "metadata", "resourceVersion"))
		}
	})
}

// AsMetacontrollerApplies returns the object Metacontroller's server-side
// apply sends for a desired child: the parent's namespace, the controller-uid
// label of generateSelector, and a controllerRef to the parent.
func AsMetacontrollerApplies(child Obj, ns string, parent Obj) Obj {
	out := DeepCopy(child).(map[string]any)
	meta, _ := out["metadata"].(map[string]any)
	if meta == nil {
		meta = Obj{}
		out["metadata"] = meta
	}
	meta["namespace"] = ns
	labels, _ := meta["labels"].(map[string]any)
	labels = maps.Clone(labels)
	if labels == nil {
		labels = Obj{}
	}
	labels["controller-uid"] = Dig(parent, "metadata", "uid")
	meta["labels"] = labels
	meta["ownerReferences"] = []any{Obj{
		"apiVersion":         parent["apiVersion"],
		"kind":               parent["kind"],
		"name":               Dig(parent, "metadata", "name"),
		"uid":                Dig(parent, "metadata", "uid"),
		"controller":         true,
		"blockOwnerDeletion": true,
	}}
	return out
}

// CheckStatusStored writes status as Metacontroller does and requires the
// stored status to equal it exactly (StatusDiff), failing t otherwise; it
// returns the updated parent.
func (f *Fixture) CheckStatusStored(t *testing.T, parent, status Obj) Obj {
	t.Helper()
	sent, stored, err := f.WriteStatus(t.Context(), parent, status)
	if err != nil {
		t.Fatal(err)
	}
	if err := StatusDiff(sent, stored["status"]); err != nil {
		t.Errorf("%v — Metacontroller would write status on every sync", err)
	}
	return stored
}

// WriteStatus replaces the live parent's status whole, with
// observedGeneration forced to metadata.generation, through /status — what
// Metacontroller does — and reads the parent back.
func (f *Fixture) WriteStatus(ctx context.Context, parent, status Obj) (sent, stored Obj, err error) {
	k := f.Kube
	path := "/apis/stackdome.io/v1alpha1/namespaces/" + Dig(parent, "metadata", "namespace").(string) +
		"/stackresources/" + Dig(parent, "metadata", "name").(string)
	live, err := k.Get(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	sent = DeepCopy(status).(map[string]any)
	sent["observedGeneration"] = Dig(live, "metadata", "generation")
	live["status"] = sent
	if _, err := k.Put(ctx, path+"/status", live); err != nil {
		return nil, nil, fmt.Errorf("writing status: %w", err)
	}
	stored, err = k.Get(ctx, path)
	return sent, stored, err
}

// StatusDiff is nil when the stored status equals the sent one exactly.
func StatusDiff(sent Obj, stored any) error {
	if p, why := FirstMismatch("status", sent, stored); p != "" {
		return fmt.Errorf("stored status differs at %s: %s", p, why)
	}
	if p, _ := FirstMismatch("status", stored, sent); p != "" {
		return fmt.Errorf("the server added %s to the status", p)
	}
	return nil
}

// ChangedByApply reports whether a write changed what the hook owns.
// Workloads' resourceVersion also moves with kube-controller-manager's
// status writes, so kinds with a generation (which moves only with spec) are
// judged by it; the others have no writer but the test here.
func ChangedByApply(before, after Obj) bool {
	field := "generation"
	if Dig(before, "metadata", "generation") == nil {
		field = "resourceVersion"
	}
	return Dig(before, "metadata", field) != Dig(after, "metadata", field)
}
