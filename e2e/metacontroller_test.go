//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
)

// metacontroller does, for one parent, what Metacontroller v4.17.2 does in one
// sync (metacontroller/metacontroller@v4.17.2 pkg/controller/composite/controller.go,
// syncParentObject; docs/e2e.md lists what it reproduces
// and what it does not, with the source file of each): read the
// CompositeController, ask customize for related rules, gather owned
// children and the related objects those rules select from the live cluster
// into the request a sync hook at the registered version receives (keys,
// namespace filter), call sync, read the answer as that version is read
// (strict at v2), delete observed children not desired, apply the desired
// ones with server-side apply, and write the status through /status when it
// differs from the live one.
//
// Metacontroller deletes first, then applies the desired children group by
// group in map order — no order a hook may count on. The emulation applies
// them in the reverse of the answer's order, so a reference (the
// IngressRoute, last in stackdome's answers) reaches the API server before
// what it refers to; afterWrite, when set, is called after every single
// delete and apply, to prove that no state in between breaks an invariant.
type metacontroller struct {
	kube       *kube
	hook       hookServer
	afterWrite func(ctx context.Context) error
	// controller names the live CompositeController the emulation runs
	// under, read on every sync (a test that installs the chart sets it);
	// empty: the chart's, as `helm template` renders it.
	controller string
}

// syncResult is one sync as seen from outside: what the hook answered and
// what it cost the API server.
type syncResult struct {
	request       obj // what the emulation sent
	response      obj
	statusWritten bool
	childWrites   []string // kind/name of children whose resourceVersion changed
	created       []string // kind/name of children created
	deleted       []string // kind/name of children deleted
	broken        []string // afterWrite's complaints, after which write
	// notAsSent names children the server stored differently from what the
	// hook returned: with the default dynamic-apply, an update every sync.
	notAsSent []string
}

func (m *metacontroller) sync(ctx context.Context, ns, name string) (*syncResult, error) {
	parentPath := "/apis/stackdome.io/v1alpha1/namespaces/" + ns + "/stackresources/" + name
	parent, err := m.kube.get(ctx, parentPath)
	if err != nil {
		return nil, err
	}
	uid, _ := dig(parent, "metadata", "uid").(string)
	cc, err := m.compositeController(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the CompositeController: %w", err)
	}
	syncVersion := hookVersion(cc, "sync")

	var custom struct {
		RelatedResources []relatedRule `json:"relatedResources"`
	}
	if err := m.hook.post(ctx, "/customize", obj{"controller": cc, "parent": parent}, &custom); err != nil {
		return nil, fmt.Errorf("customize: %w", err)
	}
	related := requestMap{}
	for _, r := range custom.RelatedResources {
		kind, err := m.kindOf(ctx, r.APIVersion, r.Resource)
		if err != nil {
			return nil, fmt.Errorf("related rule: %w", err)
		}
		objs, err := m.relatedObjects(ctx, hookVersion(cc, "customize"), ns, kind, r)
		if err != nil {
			return nil, err
		}
		group := kind + "." + r.APIVersion
		related.initGroup(group)
		for _, o := range objs {
			related.insert(syncVersion, ns, group, o)
		}
	}

	children := requestMap{}
	observed := map[string]obj{} // kind/name → object
	rules, _ := dig(cc, "spec", "childResources").([]any)
	for _, rule := range rules {
		apiVersion, _ := dig(rule, "apiVersion").(string)
		resource, _ := dig(rule, "resource").(string)
		kind, err := m.kindOf(ctx, apiVersion, resource)
		if err != nil {
			return nil, fmt.Errorf("child rule: %w", err)
		}
		group := kind + "." + apiVersion
		children.initGroup(group)
		path, err := m.kube.resourcePath(ctx, apiVersion, kind, ns, "")
		if err != nil {
			return nil, err
		}
		items, err := listItems(ctx, path, "")
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if !ownedBy(it, uid) {
				continue
			}
			// Items of a built-in list carry no apiVersion and kind.
			it["apiVersion"], it["kind"] = apiVersion, kind
			children.insert(syncVersion, ns, group, it)
			observed[kind+"/"+dig(it, "metadata", "name").(string)] = it
		}
	}

	req := obj{"controller": cc, "parent": parent, "children": children.asObj(), "related": related.asObj(), "finalizing": false}
	if err := recordRequest(ns, name, syncVersion, req); err != nil {
		return nil, err
	}
	var raw json.RawMessage
	if err := m.hook.post(ctx, "/sync", req, &raw); err != nil {
		return nil, fmt.Errorf("sync: %w", err)
	}
	resp, err := decodeAnswer(raw, strictAnswers(cc))
	if err != nil {
		return nil, fmt.Errorf("sync hook at %s: %w", syncVersion, err)
	}
	res := &syncResult{response: resp, request: req}
	desired := resp["children"].([]any)

	want := map[string]bool{}
	for _, d := range desired {
		d, _ := d.(map[string]any)
		want[fmt.Sprint(d["kind"])+"/"+fmt.Sprint(dig(d, "metadata", "name"))] = true
	}
	for key, o := range observed {
		if want[key] {
			continue
		}
		p, err := m.kube.objectPath(ctx, o, ns)
		if err != nil {
			return nil, err
		}
		q := url.Values{"propagationPolicy": {"Background"}}
		if err := m.kube.do(ctx, "DELETE", p+"?"+q.Encode(), "", nil, nil); err != nil && !isCode(err, 404) {
			return nil, fmt.Errorf("deleting %s: %w", key, err)
		}
		res.deleted = append(res.deleted, key)
		m.check(ctx, res, "deleting "+key)
	}
	for i := len(desired) - 1; i >= 0; i-- {
		d, _ := desired[i].(map[string]any)
		sent := asMetacontrollerApplies(d, ns, parent)
		p, err := m.kube.objectPath(ctx, sent, ns)
		if err != nil {
			return nil, err
		}
		applied, err := m.kube.apply(ctx, p, sent)
		if err != nil {
			return nil, fmt.Errorf("applying %s/%v: %w", d["kind"], dig(d, "metadata", "name"), err)
		}
		key := fmt.Sprint(d["kind"]) + "/" + fmt.Sprint(dig(d, "metadata", "name"))
		if path, why := firstLoop("", sent, applied); path != "" {
			res.notAsSent = append(res.notAsSent, fmt.Sprintf("%s: %s: %s", key, path, why))
		}
		if before, ok := observed[key]; !ok {
			res.created = append(res.created, key)
		} else if changedByApply(before, applied) {
			res.childWrites = append(res.childWrites, key)
		}
		m.check(ctx, res, "applying "+key)
	}

	status := deepCopy(resp["status"]).(map[string]any)
	status["observedGeneration"] = dig(parent, "metadata", "generation")
	if !reflect.DeepEqual(status, parent["status"]) {
		live, err := m.kube.get(ctx, parentPath)
		if err != nil {
			return nil, err
		}
		live["status"] = status
		if _, err := m.kube.put(ctx, parentPath+"/status", live); err != nil && !isCode(err, 409) {
			return nil, fmt.Errorf("writing status: %w", err)
		}
		res.statusWritten = true
	}
	return res, nil
}

// check runs afterWrite, if any, and records what it found.
func (m *metacontroller) check(ctx context.Context, res *syncResult, after string) {
	if m.afterWrite == nil {
		return
	}
	if err := m.afterWrite(ctx); err != nil {
		res.broken = append(res.broken, after+": "+err.Error())
	}
}

// settle syncs ns/name until an answer changes no child, as Metacontroller
// does while it sees its own writes, and returns the last sync and the
// children deleted on the way. Every sync must store each child as sent and
// leave every route routable after each single write (afterWrite); a
// failure is reported under phase. Six syncs that keep writing fail t.
func (m *metacontroller) settle(t *testing.T, ns, name, phase string) (res *syncResult, deleted []string) {
	t.Helper()
	for i := range 6 {
		res, err := m.sync(t.Context(), ns, name)
		if err != nil {
			t.Fatalf("%s: sync: %v", phase, err)
		}
		for _, c := range res.notAsSent {
			t.Errorf("%s: child not stored as sent: %s", phase, c)
		}
		for _, b := range res.broken {
			t.Errorf("%s: a route would be disabled after %s", phase, b)
		}
		deleted = append(deleted, res.deleted...)
		if res.settled() {
			t.Logf("%s: settled after %d sync(s)", phase, i+1)
			return res, deleted
		}
		t.Logf("%s: sync %d created %v, updated %v, deleted %v", phase, i+1, res.created, res.childWrites, res.deleted)
	}
	t.Fatalf("%s: children did not settle in 6 syncs", phase)
	return nil, nil
}

// settled reports an answer that changed no child: Metacontroller, watching
// its children, syncs again after each change until one does.
func (r *syncResult) settled() bool {
	return len(r.childWrites) == 0 && len(r.created) == 0 && len(r.deleted) == 0
}

// changedByApply reports whether an apply changed what we own. Workloads'
// resourceVersion also moves with kube-controller-manager's status writes, so
// kinds with a generation (which moves only with spec) are judged by it; the
// others have no writer but us here.
func changedByApply(before, after obj) bool {
	field := "generation"
	if dig(before, "metadata", "generation") == nil {
		field = "resourceVersion"
	}
	return dig(before, "metadata", field) != dig(after, "metadata", field)
}

func ownedBy(o obj, uid string) bool {
	refs, _ := dig(o, "metadata", "ownerReferences").([]any)
	for _, r := range refs {
		if dig(r, "uid") == uid && dig(r, "controller") == true {
			return true
		}
	}
	return false
}

// requestSeq numbers the requests recordRequest writes, in the order sent.
var requestSeq atomic.Int64

// recordRequest writes a sync request as the emulation sends it to
// $STACKDOME_E2E_REQUESTS/<seq>-<namespace>-<name>-sync-<version>.json when
// that variable names a directory, so what each hook version receives can be
// read and compared (docs/e2e.md); it does nothing otherwise.
func recordRequest(ns, name, version string, req obj) error {
	dir := os.Getenv("STACKDOME_E2E_REQUESTS")
	if dir == "" {
		return nil
	}
	b, err := json.MarshalIndent(req, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	file := fmt.Sprintf("%05d-%s-%s-sync-%s.json", requestSeq.Add(1), ns, name, version)
	return os.WriteFile(filepath.Join(dir, file), append(b, '\n'), 0o644)
}
