//go:build e2e

package framework

// StackResources on the real node: made, read, and waited for.

import (
	"fmt"
	"strconv"
	"time"
)

// SRPath is the REST path of the StackResources of ns (name "" for the
// collection).
func SRPath(ns, name string) string {
	p := "/apis/stackdome.io/v1alpha1/namespaces/" + ns + "/stackresources"
	if name != "" {
		p += "/" + name
	}
	return p
}

// CreateApp creates the StackResource name in ns with spec; it fails the
// test if the API server refuses it.
func (f *NodeFixture) CreateApp(ns, name string, spec Obj) {
	t := f.t
	t.Helper()
	if _, err := f.Kube.Create(t.Context(), SRPath(ns, ""), Obj{
		"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource",
		"metadata": Obj{"name": name}, "spec": spec,
	}); err != nil {
		t.Fatalf("creating StackResource %s/%s: %v", ns, name, err)
	}
}

// SRCondition is the status condition of type typ of a StackResource, or
// nil.
func SRCondition(sr Obj, typ string) Obj {
	cs, _ := Dig(sr, "status", "conditions").([]any)
	for _, c := range cs {
		if m, ok := c.(Obj); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

// WaitCondition waits until the StackResource's condition typ has status
// and reason, and returns the StackResource; it fails the test after
// timeout, naming the condition last seen.
func (f *NodeFixture) WaitCondition(timeout time.Duration, ns, name, typ, status, reason string) Obj {
	t := f.t
	t.Helper()
	var sr Obj
	f.WaitFor(timeout, fmt.Sprintf("%s/%s %s=%s %s", ns, name, typ, status, reason), func() (bool, error) {
		var err error
		if sr, err = f.Kube.Get(t.Context(), SRPath(ns, name)); err != nil {
			return false, err
		}
		c := SRCondition(sr, typ)
		if c == nil || c["status"] != status || c["reason"] != reason {
			return false, fmt.Errorf("%s is %v", typ, c)
		}
		return true, nil
	})
	return sr
}

// PortStates is status.ports as name → state.
func PortStates(sr Obj) map[string]string {
	out := map[string]string{}
	for _, p := range ToSlice(Dig(sr, "status", "ports")) {
		out[fmt.Sprint(Dig(p, "name"))] = fmt.Sprint(Dig(p, "state"))
	}
	return out
}

// ListRV is the resourceVersion of a list of ns's StackResources: every
// write after it has a greater one.
func (f *NodeFixture) ListRV(ns string) uint64 {
	t := f.t
	t.Helper()
	list, err := f.Kube.Get(t.Context(), SRPath(ns, ""))
	if err != nil {
		t.Fatal(err)
	}
	rv, err := strconv.ParseUint(fmt.Sprint(Dig(list, "metadata", "resourceVersion")), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return rv
}
