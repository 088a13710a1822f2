//go:build e2e

package framework

// The node's Metacontroller runs its production manifests' flags. A test
// that needs another (a verbosity that logs the hook requests, the raised
// limits a fleet wants) changes them here, in one way: the args of its
// StatefulSet's container, replaced by a strategic merge patch, then
// metacontroller-0 waited for until it runs them and is Ready; and the
// manifests' args put back the same way when the test ends.

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// mcStatefulSet is Metacontroller's StatefulSet, as its production
// manifests name it.
const mcStatefulSet = "/apis/apps/v1/namespaces/metacontroller/statefulsets/metacontroller"

// MCRaisedFlags are the raised limits docs/install.md recommends for a
// fleet: Metacontroller's client rate and its workers.
var MCRaisedFlags = []string{"--client-go-qps=100", "--client-go-burst=200", "--workers=20"}

// MetacontrollerArgs are the args of the container of Metacontroller's
// StatefulSet; the test fails unless it runs exactly one container.
func (f *NodeFixture) MetacontrollerArgs() []string {
	t := f.t
	t.Helper()
	s, err := f.Kube.Get(t.Context(), mcStatefulSet)
	if err != nil {
		t.Fatal(err)
	}
	containers := ToSlice(Dig(s, "spec", "template", "spec", "containers"))
	if len(containers) != 1 {
		t.Fatalf("Metacontroller's StatefulSet runs %d containers, want one", len(containers))
	}
	return toStrings(Dig(containers[0], "args"))
}

// SetMetacontrollerArgs sets the args of Metacontroller's container and
// waits until metacontroller-0 runs them and is Ready.
func (f *NodeFixture) SetMetacontrollerArgs(args []string) {
	t := f.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The container is merged by name, its args replaced.
	patch := Obj{"spec": Obj{"template": Obj{"spec": Obj{"containers": []any{Obj{"name": "metacontroller", "args": ToAny(args)}}}}}}
	if err := f.Kube.Do(ctx, http.MethodPatch, mcStatefulSet, "application/strategic-merge-patch+json", patch, nil); err != nil {
		t.Fatalf("setting Metacontroller's args to %q: %v", args, err)
	}
	if err := WaitUntil(3*time.Minute, 500*time.Millisecond, fmt.Sprintf("metacontroller-0 Ready with args %q", args), func() (bool, error) {
		p, err := f.Kube.Get(ctx, "/api/v1/namespaces/metacontroller/pods/metacontroller-0")
		if err != nil {
			return false, err
		}
		got := metacontrollerPodArgs(p)
		return slices.Equal(got, args) && PodReady(p) && Dig(p, "metadata", "deletionTimestamp") == nil,
			fmt.Errorf("args %q, phase %v", got, Dig(p, "status", "phase"))
	}); err != nil {
		t.Fatal(err)
	}
}

// RaiseMetacontroller appends flags to Metacontroller's args
// (SetMetacontrollerArgs), and puts the args it had back when the test
// ends, waiting for the pod again.
func (f *NodeFixture) RaiseMetacontroller(flags []string) {
	t := f.t
	t.Helper()
	before := f.MetacontrollerArgs()
	t.Cleanup(func() { f.SetMetacontrollerArgs(before) })
	f.SetMetacontrollerArgs(append(slices.Clone(before), flags...))
}

// MetacontrollerPodArgs are the args metacontroller-0 runs, for the log.
func (f *NodeFixture) MetacontrollerPodArgs() []string {
	f.t.Helper()
	return metacontrollerPodArgs(f.MetacontrollerPod())
}

func metacontrollerPodArgs(pod Obj) []string {
	containers := ToSlice(Dig(pod, "spec", "containers"))
	if len(containers) == 0 {
		return nil
	}
	return toStrings(Dig(containers[0], "args"))
}
