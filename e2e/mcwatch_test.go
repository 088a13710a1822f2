//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stackdome/stackdome/e2e/framework"
)

// What a test sees of the real Metacontroller: the hook exchanges through the
// cluster-network stand-in (clusternet_test.go) and every write to the API
// server, read from watches started at the resourceVersion before the step.
// A test never steps Metacontroller; it waits for what it does.

// nsWatch records every event of the watched resources of one namespace —
// the parents and every child kind of the CompositeController — from the
// resourceVersion each list had when the watch began.
type nsWatch struct {
	ns     string
	cancel context.CancelFunc

	mu     sync.Mutex
	events []watchEvent
	errs   []string
}

// watchEvent is one event of a watch, in etcd's order (rv).
type watchEvent struct {
	at       time.Time
	typ      string // ADDED, MODIFIED, DELETED
	resource string // plural, e.g. ingressroutes
	rv       uint64
	object   obj
}

func (e watchEvent) key() string {
	return fmt.Sprintf("%s/%v", e.object["kind"], framework.Dig(e.object, "metadata", "name"))
}

// watchedResources are the collections a namespace watch follows: the
// StackResources and every child resource the chart's CompositeController
// names (apiVersion → plural), read from the chart.
var watchedResources = [][2]string{
	{"stackdome.io/v1alpha1", "stackresources"},
	{"apps/v1", "deployments"}, {"apps/v1", "statefulsets"},
	{"v1", "services"}, {"v1", "persistentvolumeclaims"}, {"v1", "serviceaccounts"},
	{"discovery.k8s.io/v1", "endpointslices"},
	{"policy/v1", "poddisruptionbudgets"},
	{"autoscaling/v2", "horizontalpodautoscalers"},
	{"networking.k8s.io/v1", "networkpolicies"},
	{"traefik.io/v1alpha1", "ingressroutes"}, {"traefik.io/v1alpha1", "middlewares"},
}

func collectionPath(apiVersion, resource, ns string) string {
	if apiVersion == "v1" {
		return "/api/v1/namespaces/" + ns + "/" + resource
	}
	return "/apis/" + apiVersion + "/namespaces/" + ns + "/" + resource
}

// watchNamespace starts the watches of ns; they end with the test.
func watchNamespace(t *testing.T, ns string) *nsWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &nsWatch{ns: ns, cancel: cancel}
	t.Cleanup(cancel)
	k := suite.cluster.Kube
	for _, r := range watchedResources {
		path := collectionPath(r[0], r[1], ns)
		var list struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if err := k.Do(ctx, "GET", path, "", nil, &list); err != nil {
			if framework.IsCode(err, 404) {
				continue // a kind this cluster does not serve
			}
			t.Fatalf("listing %s: %v", path, err)
		}
		go w.follow(ctx, r[1], path, list.Metadata.ResourceVersion)
	}
	return w
}

var watchClient = &http.Client{}

// follow reads one watch stream until ctx ends, reconnecting from the last
// resourceVersion seen when the server closes it.
func (w *nsWatch) follow(ctx context.Context, resource, path, rv string) {
	k := suite.cluster.Kube
	if watchClient.Transport == nil {
		watchClient.Transport = k.HTTP.Transport
	}
	for ctx.Err() == nil {
		req, err := http.NewRequestWithContext(ctx, "GET", k.Base+path+"?watch=1&allowWatchBookmarks=true&resourceVersion="+rv, nil)
		if err != nil {
			w.fail(err)
			return
		}
		req.Header.Set("Authorization", "Bearer "+k.Token)
		resp, err := watchClient.Do(req)
		if err != nil {
			if ctx.Err() == nil {
				w.fail(fmt.Errorf("watch %s: %w", path, err))
			}
			return
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			var ev struct {
				Type   string `json:"type"`
				Object obj    `json:"object"`
			}
			if err := decodeJSON(sc.Bytes(), &ev); err != nil {
				w.fail(fmt.Errorf("watch %s: %w", path, err))
				continue
			}
			v, _ := framework.Dig(ev.Object, "metadata", "resourceVersion").(string)
			if v != "" {
				rv = v
			}
			if ev.Type == "BOOKMARK" {
				continue
			}
			if ev.Type == "ERROR" {
				w.fail(fmt.Errorf("watch %s: %s", path, mustJSON(ev.Object)))
				resp.Body.Close()
				return
			}
			n, _ := strconv.ParseUint(v, 10, 64)
			w.mu.Lock()
			w.events = append(w.events, watchEvent{at: time.Now(), typ: ev.Type, resource: resource, rv: n, object: ev.Object})
			w.mu.Unlock()
		}
		resp.Body.Close()
	}
}

func (w *nsWatch) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.errs = append(w.errs, err.Error())
}

// since returns the events after mark (a count from mark()), in etcd's
// order: watches of different resources deliver in their own order, their
// resourceVersions tell the order the server wrote them in.
func (w *nsWatch) since(mark int) []watchEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := slices.Clone(w.events[min(mark, len(w.events)):])
	sort.SliceStable(out, func(i, j int) bool { return out[i].rv < out[j].rv })
	return out
}

// mark is the number of events seen so far.
func (w *nsWatch) mark() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.events)
}

// all is every event from the start, in etcd's order.
func (w *nsWatch) all() []watchEvent { return w.since(0) }

// mirror is the state of the watched objects, rebuilt event by event: what
// a controller watching them (Traefik) could see at each single write.
type mirror map[string]map[string]obj // resource → name → object

func (m mirror) apply(e watchEvent) {
	name := fmt.Sprint(framework.Dig(e.object, "metadata", "name"))
	if m[e.resource] == nil {
		m[e.resource] = map[string]obj{}
	}
	if e.typ == "DELETED" {
		delete(m[e.resource], name)
		return
	}
	m[e.resource][name] = e.object
}

// replay rebuilds the mirror from the first event and calls check after
// each event (a check may keep what it saw), returning what check found
// from mark on, each after the write that broke it.
func (w *nsWatch) replay(mark int, check func(mirror) error) []string {
	all := w.all()
	w.mu.Lock()
	first := w.events[:min(mark, len(w.events))]
	seen := map[string]bool{}
	for _, e := range first {
		seen[fmt.Sprintf("%s/%d/%s", e.resource, e.rv, e.typ)] = true
	}
	w.mu.Unlock()
	m := mirror{}
	var broken []string
	for _, e := range all {
		m.apply(e)
		err := check(m)
		if seen[fmt.Sprintf("%s/%d/%s", e.resource, e.rv, e.typ)] {
			continue
		}
		if err != nil {
			broken = append(broken, fmt.Sprintf("after %s %s (rv %d): %v", e.typ, e.key(), e.rv, err))
		}
	}
	return broken
}

// writes is what a stretch of events says Metacontroller wrote: children
// created, updated (their generation, or for kinds without one their
// resourceVersion, moved: kube-controller-manager's status writes to
// workloads leave the generation) or deleted, and the parent's status
// written. Pods and other objects of the controllers are not watched.
type writes struct {
	created, updated, deleted []string
	statusWrites              int
	statusDiffs               []string // what each status write changed
	last                      time.Time
}

func (ws writes) none() bool {
	return len(ws.created)+len(ws.updated)+len(ws.deleted)+ws.statusWrites == 0
}

func (ws writes) String() string {
	s := fmt.Sprintf("created %v, updated %v, deleted %v, %d status write(s)", ws.created, ws.updated, ws.deleted, ws.statusWrites)
	for _, d := range ws.statusDiffs {
		s += "\nstatus (-before +after):\n" + d
	}
	return s
}

// writesOf sums the events of parent's children and status from mark on.
// prev holds each object as last seen before mark.
func (w *nsWatch) writesOf(mark int, parent string) writes {
	prev := map[string]obj{}
	var ws writes
	for i, e := range w.all() {
		key := e.resource + "/" + fmt.Sprint(framework.Dig(e.object, "metadata", "name"))
		before, had := prev[key]
		prev[key] = e.object
		if i < mark {
			continue
		}
		if e.resource == "stackresources" {
			if framework.Dig(e.object, "metadata", "name") != parent || e.typ != "MODIFIED" {
				continue
			}
			if had && mustJSON(before["status"]) != mustJSON(e.object["status"]) {
				ws.statusWrites++
				ws.statusDiffs = append(ws.statusDiffs, cmp.Diff(before["status"], e.object["status"]))
				ws.last = e.at
			}
			continue
		}
		if !ownedByName(e.object, parent) {
			continue
		}
		switch {
		case e.typ == "ADDED":
			ws.created = append(ws.created, e.key())
		case e.typ == "DELETED":
			ws.deleted = append(ws.deleted, e.key())
		case had && metacontrollerWrote(before, e.object):
			ws.updated = append(ws.updated, e.key())
		default:
			continue
		}
		ws.last = e.at
	}
	return ws
}

// ownedByName: o's controller is the StackResource named parent.
func ownedByName(o obj, parent string) bool {
	refs, _ := framework.Dig(o, "metadata", "ownerReferences").([]any)
	for _, r := range refs {
		if framework.Dig(r, "kind") == "StackResource" && framework.Dig(r, "name") == parent && framework.Dig(r, "controller") == true {
			return true
		}
	}
	return false
}

// metacontrollerWrote reports an update by Metacontroller: what the hook
// owns changed (changedByApply) and Metacontroller's managedFields entry
// (manager "metacontroller": its client's user agent) is new or changed.
// kube-controller-manager's writes (an autoscaler's /scale, a workload's
// status) carry their own manager. A second write of the same fields
// within the same second leaves the entry as it was: such a write is not
// told apart.
func metacontrollerWrote(before, after obj) bool {
	return changedByApply(before, after) && managerEntry(after, "metacontroller") != "" &&
		managerEntry(before, "metacontroller") != managerEntry(after, "metacontroller")
}

// managerEntry is o's managedFields entries of manager, as JSON ("" none).
func managerEntry(o obj, manager string) string {
	mfs, _ := framework.Dig(o, "metadata", "managedFields").([]any)
	var out []any
	for _, m := range mfs {
		if framework.Dig(m, "manager") == manager {
			out = append(out, m)
		}
	}
	if out == nil {
		return ""
	}
	return mustJSON(out)
}

// changedByApply reports whether a write changed what the hook owns.
// Workloads' resourceVersion also moves with kube-controller-manager's
// status writes, so kinds with a generation (which moves only with spec) are
// judged by it; the others have no writer but Metacontroller here.
func changedByApply(before, after obj) bool {
	field := "generation"
	if framework.Dig(before, "metadata", "generation") == nil {
		field = "resourceVersion"
	}
	return framework.Dig(before, "metadata", field) != framework.Dig(after, "metadata", field)
}

// settle waits until the real Metacontroller leaves ns/name alone: a sync
// of it answered after the step (mark, since), and after the last write
// Metacontroller made (child or status) a further sync answered, at least
// two seconds ago, that wrote nothing (a watch delivers within
// milliseconds; the margin is for a loaded machine). It returns the last sync and the writes of the
// whole stretch; past 90 s it fails t under phase.
func settle(t *testing.T, w *nsWatch, mark int, since time.Time, name, phase string) (framework.HookExchange, writes) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		if err := suite.mc.Healthy(); err != nil {
			t.Fatalf("%s: %v", phase, err)
		}
		ws := w.writesOf(mark, name)
		calls := suite.mc.Net.HookCalls("/sync", w.ns, name, since)
		// The newest sync old enough for its writes to have reached the
		// watch: settled when it came after every write, and answered.
		var last *framework.HookExchange
		for i := len(calls) - 1; i >= 0; i-- {
			if time.Since(calls[i].At) > 2*time.Second {
				last = &calls[i]
				break
			}
		}
		if last != nil {
			if last.Err != "" || last.Status != http.StatusOK {
				t.Logf("%s: sync answered %d %s", phase, last.Status, last.Err)
			} else if last.At.After(ws.last) {
				t.Logf("%s: settled after %d sync(s) of the real Metacontroller: %s", phase, len(calls), ws)
				return *last, ws
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: Metacontroller did not settle %s/%s in 90s: %d sync(s), %s; its last lines:\n%s",
				phase, w.ns, name, len(calls), ws, framework.Indent(suite.mc.Proc.Tail(20)))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// syncWhere waits for a sync of ns/name answered 200 after since that cond
// accepts (nil: any), and returns it.
func syncWhere(t *testing.T, ns, name string, since time.Time, timeout time.Duration, what string, cond func(framework.HookExchange) error) framework.HookExchange {
	t.Helper()
	var last error = fmt.Errorf("no sync yet")
	var ex framework.HookExchange
	err := framework.WaitUntil(timeout, 200*time.Millisecond, what, func() (bool, error) {
		if err := suite.mc.Healthy(); err != nil {
			return false, err
		}
		for _, c := range suite.mc.Net.HookCalls("/sync", ns, name, since) {
			if c.Status != http.StatusOK || c.Response == nil {
				last = fmt.Errorf("sync answered %d %s", c.Status, c.Err)
				continue
			}
			ex = c
			if cond == nil {
				return true, nil
			}
			if last = cond(c); last == nil {
				return true, nil
			}
		}
		return false, last
	})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return ex
}
