//go:build e2e

package node

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// watchAppWrites watches, in ns, what stackdome writes for its apps from
// now until the test ends: the StackResources (kind "sr"), every kind of
// child it makes (childKinds) and its own EndpointSlices ("slice"; only
// its own: kube-controller-manager's slices of the apps' Services change
// with their pods' readiness).
func watchAppWrites(t *testing.T, ns string) []*watcher {
	t.Helper()
	ws := []*watcher{watchPath(t, "sr", srPath(ns, ""))}
	for kind, path := range childKinds {
		ws = append(ws, watchPath(t, kind, fmt.Sprintf(path, ns)))
	}
	return append(ws, watchPath(t, "slice", "/apis/discovery.k8s.io/v1/namespaces/"+ns+
		"/endpointslices?labelSelector=endpointslice.kubernetes.io%2Fmanaged-by%3Dstackdome.io"))
}

// requireUnwritten holds a window open for three resync periods from now
// and, when hooks are given (hooks pods of the release syncing the apps),
// until those answered two syncs between them; then it fails t, naming
// phase, for every write ws received after rv (nodeWrites: a status
// changed, a child created, deleted or changed), each status written
// shown. It returns the newest resourceVersion ws received (or rv), from
// which the next window counts.
func requireUnwritten(t *testing.T, phase string, ws []*watcher, rv uint64, resync time.Duration, hooks []obj) uint64 {
	t.Helper()
	since := time.Now()
	before := map[string]float64{}
	for _, p := range hooks {
		before[podName(p)] = syncsAnswered(t, p)
	}
	waitFor(t, 90*time.Second, phase+": three resync periods and two syncs answered", func() (bool, error) {
		var n float64
		for _, p := range hooks {
			n += syncsAnswered(t, p) - before[podName(p)]
		}
		ok := time.Since(since) >= 3*resync && (len(hooks) == 0 || n >= 2)
		return ok, fmt.Errorf("%s since the window opened, %.0f syncs answered by %d hooks pods", time.Since(since).Round(time.Second), n, len(hooks))
	})
	events := merged(ws...)
	if fw := nodeWrites(events, func(e event) bool { return e.RV > rv }); len(fw.what) > 0 {
		t.Errorf("%s: %d writes, want none:\n%s", phase, len(fw.what), strings.Join(writesShown(fw, events, rv), "\n"))
	}
	for _, e := range events {
		rv = max(rv, e.RV)
	}
	return rv
}

// requireChildrenKept fails t, naming phase, for every child ws saw
// created, deleted or changed (nodeWrites) at a resourceVersion after
// from and up to to; status writes are not counted.
func requireChildrenKept(t *testing.T, phase string, ws []*watcher, from, to uint64) {
	t.Helper()
	fw := nodeWrites(merged(ws...), func(e event) bool { return e.Kind != "sr" && e.RV > from && e.RV <= to })
	if len(fw.what) > 0 {
		t.Errorf("%s: %d children written, want every child kept:\n%s", phase, len(fw.what), strings.Join(fw.what, "\n"))
	}
}

// writesShown is fw's writes, then each status written after rv: the
// reader needs what a status write said to tell a verdict from a stamp.
func writesShown(fw fleetWrites, events []event, rv uint64) []string {
	lines := append([]string(nil), fw.what...)
	for _, e := range events {
		if e.Kind == "sr" && e.RV > rv {
			status, _ := json.Marshal(framework.Dig(e.Obj, "status"))
			lines = append(lines, fmt.Sprintf("rv %d %v: status %s", e.RV, framework.Dig(e.Obj, "metadata", "name"), clip(string(status), 1500)))
		}
	}
	return lines
}

// readyPods are rel's pods of component (controller, error-pages) that
// run and are Ready, none of them terminating.
func readyPods(t *testing.T, rel *framework.Release, component string) []obj {
	t.Helper()
	var out []obj
	for _, p := range rel.Pods(t, component) {
		if framework.Dig(p, "metadata", "deletionTimestamp") == nil && podReady(p) {
			out = append(out, p)
		}
	}
	return out
}
