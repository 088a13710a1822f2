//go:build e2e

package framework

// What stackdome writes for its apps, read from watches (watch.go): the
// writes counted per app and per child, and the windows in which nothing
// may be written.

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// ChildKinds are the collections of the children stackdome makes for a
// Service or StatefulService (docs/reference.md): a DELETED event of any
// is a deletion.
var ChildKinds = map[string]string{
	"deployment":  "/apis/apps/v1/namespaces/%s/deployments",
	"statefulset": "/apis/apps/v1/namespaces/%s/statefulsets",
	"service":     "/api/v1/namespaces/%s/services",
	"route":       "/apis/traefik.io/v1alpha1/namespaces/%s/ingressroutes",
	"middleware":  "/apis/traefik.io/v1alpha1/namespaces/%s/middlewares",
	"pdb":         "/apis/policy/v1/namespaces/%s/poddisruptionbudgets",
	"policy":      "/apis/networking.k8s.io/v1/namespaces/%s/networkpolicies",
}

// AppWrites are the writes per app (by StackResource name; a child is
// its app's by the instance label), the children created among them, the
// writes per child (by kind and name), and what they were.
type AppWrites struct {
	Status, Children, Created map[string]int
	What                      []string
	// States is, per child ("<kind> <name>"), what each counted write left:
	// spec, labels, annotations (but for controllerAnnotations) and an
	// EndpointSlice's address type, endpoints and ports, as JSON, "deleted"
	// for a deletion. ChildDiffs reads it.
	States map[string][]string
}

// ChildDiffs is, for a child written more than once, what each write after
// the first changed (cmp.Diff of the states before and after), one string
// a write.
func (fw AppWrites) ChildDiffs(child string) []string {
	var out []string
	states := fw.States[child]
	decode := func(state string) any {
		var v any
		if json.Unmarshal([]byte(state), &v) != nil {
			return state // "deleted"
		}
		return v
	}
	for i := 1; i < len(states); i++ {
		out = append(out, fmt.Sprintf("write %d (-before +after):\n%s", i+1, cmp.Diff(decode(states[i-1]), decode(states[i]))))
	}
	return out
}

// Twice names the children written more than once, sorted.
func (fw AppWrites) Twice() []string {
	var out []string
	for child, states := range fw.States {
		if n := len(states); n > 1 {
			out = append(out, fmt.Sprintf("%s written %d times", child, n))
		}
	}
	sort.Strings(out)
	return out
}

// controllerAnnotations are the annotations the workload controllers keep
// on the children stackdome returns: their writes are not stackdome's.
var controllerAnnotations = []string{"deployment.kubernetes.io/revision"}

// NodeWrites reads stackdome's writes among events (in the order they
// were written: Merged) that counted says to count: a StackResource's
// status changed, a child created, deleted, or its spec (an EndpointSlice's
// endpoints and ports), labels or annotations changed (but for
// controllerAnnotations). The events not counted are read to know each
// object's state.
func NodeWrites(events []WatchEvent, counted func(WatchEvent) bool) AppWrites {
	fw := AppWrites{Status: map[string]int{}, Children: map[string]int{}, Created: map[string]int{}, States: map[string][]string{}}
	last := map[string]string{}
	for _, e := range events {
		key := e.Kind + "/" + fmt.Sprint(Dig(e.Obj, "metadata", "uid"))
		var state any
		app := fmt.Sprint(Dig(e.Obj, "metadata", "labels", "app.kubernetes.io/instance"))
		if e.Kind == "sr" {
			state, app = Dig(e.Obj, "status"), fmt.Sprint(Dig(e.Obj, "metadata", "name"))
		} else {
			annotations := map[string]any{}
			if a, ok := Dig(e.Obj, "metadata", "annotations").(map[string]any); ok {
				for k, v := range a {
					if !slices.Contains(controllerAnnotations, k) {
						annotations[k] = v
					}
				}
			}
			// An EndpointSlice has no spec: what it says is its address
			// type, endpoints and ports (nil for every other kind).
			state = []any{Dig(e.Obj, "spec"), Dig(e.Obj, "metadata", "labels"), annotations,
				e.Obj["addressType"], e.Obj["endpoints"], e.Obj["ports"]}
		}
		b, _ := json.Marshal(state)
		prev, seen := last[key]
		last[key] = string(b)
		changed := !seen || prev != string(b) || e.Type == "DELETED"
		if !changed || !counted(e) {
			continue
		}
		if e.Kind == "sr" {
			if e.Type == "ADDED" {
				continue // the create, not a status write
			}
			fw.Status[app]++
		} else {
			fw.Children[app]++
			child := fmt.Sprintf("%s %v", e.Kind, Dig(e.Obj, "metadata", "name"))
			if e.Type == "DELETED" {
				fw.States[child] = append(fw.States[child], "deleted")
			} else {
				fw.States[child] = append(fw.States[child], string(b))
			}
			if !seen {
				fw.Created[app]++
			}
		}
		fw.What = append(fw.What, fmt.Sprintf("rv %d %s %s %v", e.RV, e.Type, e.Kind, Dig(e.Obj, "metadata", "name")))
	}
	return fw
}

// WatchAppWrites watches, in ns, what stackdome writes for its apps from
// now until the test ends: the StackResources (kind "sr"), every kind of
// child it makes (ChildKinds) and its own EndpointSlices ("slice"; only
// its own: kube-controller-manager's slices of the apps' Services change
// with their pods' readiness).
func (f *NodeFixture) WatchAppWrites(ns string) []*Watcher {
	f.t.Helper()
	ws := []*Watcher{f.WatchPath("sr", SRPath(ns, ""))}
	for kind, path := range ChildKinds {
		ws = append(ws, f.WatchPath(kind, fmt.Sprintf(path, ns)))
	}
	return append(ws, f.WatchPath("slice", "/apis/discovery.k8s.io/v1/namespaces/"+ns+
		"/endpointslices?labelSelector=endpointslice.kubernetes.io%2Fmanaged-by%3Dstackdome.io"))
}

// RequireUnwritten holds a window open for three resync periods from now
// and, when hooks are given (hooks pods of the release syncing the apps),
// until those answered two syncs between them; then it fails t, naming
// phase, for every write ws received after rv (NodeWrites: a status
// changed, a child created, deleted or changed), each status written
// shown. It returns the newest resourceVersion ws received (or rv), from
// which the next window counts.
func (f *NodeFixture) RequireUnwritten(phase string, ws []*Watcher, rv uint64, resync time.Duration, hooks []Obj) uint64 {
	t := f.t
	t.Helper()
	since := time.Now()
	before := map[string]float64{}
	for _, p := range hooks {
		before[PodName(p)] = f.SyncsAnswered(p)
	}
	f.WaitFor(90*time.Second, phase+": three resync periods and two syncs answered", func() (bool, error) {
		var n float64
		for _, p := range hooks {
			n += f.SyncsAnswered(p) - before[PodName(p)]
		}
		ok := time.Since(since) >= 3*resync && (len(hooks) == 0 || n >= 2)
		return ok, fmt.Errorf("%s since the window opened, %.0f syncs answered by %d hooks pods", time.Since(since).Round(time.Second), n, len(hooks))
	})
	events := Merged(ws...)
	if fw := NodeWrites(events, func(e WatchEvent) bool { return e.RV > rv }); len(fw.What) > 0 {
		t.Errorf("%s: %d writes, want none:\n%s", phase, len(fw.What), strings.Join(writesShown(fw, events, rv), "\n"))
	}
	for _, e := range events {
		rv = max(rv, e.RV)
	}
	return rv
}

// RequireChildrenKept fails t, naming phase, for every child ws saw
// created, deleted or changed (NodeWrites) at a resourceVersion after
// from and up to to; status writes are not counted.
func RequireChildrenKept(t *testing.T, phase string, ws []*Watcher, from, to uint64) {
	t.Helper()
	fw := NodeWrites(Merged(ws...), func(e WatchEvent) bool { return e.Kind != "sr" && e.RV > from && e.RV <= to })
	if len(fw.What) > 0 {
		t.Errorf("%s: %d children written, want every child kept:\n%s", phase, len(fw.What), strings.Join(fw.What, "\n"))
	}
}

// writesShown is fw's writes, then each status written after rv: the
// reader needs what a status write said to tell a verdict from a stamp.
func writesShown(fw AppWrites, events []WatchEvent, rv uint64) []string {
	lines := append([]string(nil), fw.What...)
	for _, e := range events {
		if e.Kind == "sr" && e.RV > rv {
			status, _ := json.Marshal(Dig(e.Obj, "status"))
			lines = append(lines, fmt.Sprintf("rv %d %v: status %s", e.RV, Dig(e.Obj, "metadata", "name"), Clip(string(status), 1500)))
		}
	}
	return lines
}

// ReadyPods are r's pods of component (controller, error-pages) that
// run and are Ready, none of them terminating.
func (r *Release) ReadyPods(t *testing.T, component string) []Obj {
	t.Helper()
	var out []Obj
	for _, p := range r.Pods(t, component) {
		if Dig(p, "metadata", "deletionTimestamp") == nil && PodReady(p) {
			out = append(out, p)
		}
	}
	return out
}
