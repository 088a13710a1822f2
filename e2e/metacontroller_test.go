//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/url"
	"reflect"
)

// childKinds are the CompositeController's childResources as the chart
// declares them; Metacontroller sends a group for each, even when empty.
var childKinds = []struct{ apiVersion, kind string }{
	{"v1", "Service"},
	{"apps/v1", "Deployment"},
	{"apps/v1", "StatefulSet"},
	{"traefik.io/v1alpha1", "Middleware"},
	{"traefik.io/v1alpha1", "IngressRoute"},
	{"autoscaling/v2", "HorizontalPodAutoscaler"},
	{"discovery.k8s.io/v1", "EndpointSlice"},
}

// controllerObject is the CompositeController as Metacontroller puts it in
// every request, as the chart declares it: generateSelector, sync at hook
// version v1, customize at v2 (related objects of another namespace).
var controllerObject = obj{
	"metadata": obj{"name": "stackdome-e2e"},
	"spec": obj{
		"generateSelector": true,
		"parentResource":   obj{"apiVersion": "stackdome.io/v1alpha1", "resource": "stackresources"},
		"childResources": []any{
			obj{"apiVersion": "v1", "resource": "services", "updateStrategy": obj{"method": "InPlace"}},
			obj{"apiVersion": "apps/v1", "resource": "deployments", "updateStrategy": obj{"method": "InPlace"}},
			obj{"apiVersion": "apps/v1", "resource": "statefulsets", "updateStrategy": obj{"method": "InPlace"}},
			obj{"apiVersion": "traefik.io/v1alpha1", "resource": "middlewares", "updateStrategy": obj{"method": "InPlace"}},
			obj{"apiVersion": "traefik.io/v1alpha1", "resource": "ingressroutes", "updateStrategy": obj{"method": "InPlace"}},
			obj{"apiVersion": "autoscaling/v2", "resource": "horizontalpodautoscalers", "updateStrategy": obj{"method": "InPlace"}},
			obj{"apiVersion": "discovery.k8s.io/v1", "resource": "endpointslices", "updateStrategy": obj{"method": "InPlace"}},
		},
		"hooks": obj{
			"sync":      obj{"version": "v1", "webhook": obj{"url": "http://127.0.0.1/sync"}},
			"customize": obj{"version": "v2", "webhook": obj{"url": "http://127.0.0.1/customize"}},
		},
	},
}

// metacontroller does, for one parent, what Metacontroller v4.17.2 does in one
// sync (reference/metacontroller.md §4): ask customize for related rules,
// gather owned children and the related objects those rules select from the
// live cluster into the request shape it sends (relatedObjects), call sync, delete observed children not desired,
// apply the desired ones with server-side apply, and write the status through
// /status when it differs from the live one.
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
}

// syncResult is one sync as seen from outside: what the hook answered and
// what it cost the API server.
type syncResult struct {
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

	var custom struct {
		RelatedResources []relatedRule `json:"relatedResources"`
	}
	if err := m.hook.post(ctx, "/customize", obj{"controller": controllerObject, "parent": parent}, &custom); err != nil {
		return nil, fmt.Errorf("customize: %w", err)
	}
	related := obj{}
	for _, r := range custom.RelatedResources {
		kind, group, err := m.relatedGroup(ctx, r)
		if err != nil {
			return nil, err
		}
		objs, err := m.relatedObjects(ctx, ns, kind, r)
		if err != nil {
			return nil, err
		}
		if related[group] == nil {
			related[group] = obj{}
		}
		for _, o := range objs {
			related[group].(obj)[objectKey(hookVersion("sync"), o)] = o
		}
	}

	children := obj{}
	observed := map[string]obj{} // kind/name → object
	for _, ck := range childKinds {
		group := obj{}
		path, err := m.kube.resourcePath(ctx, ck.apiVersion, ck.kind, ns, "")
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
			it["apiVersion"], it["kind"] = ck.apiVersion, ck.kind
			n := dig(it, "metadata", "name").(string)
			group[n] = it
			observed[ck.kind+"/"+n] = it
		}
		children[ck.kind+"."+ck.apiVersion] = group
	}

	req := obj{"controller": controllerObject, "parent": parent, "children": children, "related": related, "finalizing": false}
	var resp obj
	if err := m.hook.post(ctx, "/sync", req, &resp); err != nil {
		return nil, fmt.Errorf("sync: %w", err)
	}
	res := &syncResult{response: resp}

	desired, ok := resp["children"].([]any)
	if !ok {
		return nil, fmt.Errorf("sync answered children %T, want an array (null deletes every child)", resp["children"])
	}
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

	status, ok := resp["status"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("sync answered status %T, want an object (null wipes the status)", resp["status"])
	}
	status = deepCopy(status).(map[string]any)
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
