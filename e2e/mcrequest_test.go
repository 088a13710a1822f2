//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	kyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// What the emulation reads of a CompositeController, and how it builds the
// sync request and reads the answer at each hook version, as
// Metacontroller v4.17.2 does (docs/e2e.md lists each behaviour and the
// source file it was read from).

// chartController is the CompositeController the chart renders with its
// defaults (release "stackdome" in namespace "stackdome"): what the
// emulation plays when a test installs no chart of its own. It is rendered
// once, with `helm template`, so the emulation always registers the hooks
// at the versions the chart does.
var chartController = sync.OnceValues(func() (obj, error) {
	out, err := helm(context.Background(), "template", "stackdome", suiteChart(), "--namespace", "stackdome", "--kube-version", "v1.37.2",
		"--api-versions", "metacontroller.k8s.io/v1alpha1", "--api-versions", "traefik.io/v1alpha1",
		"--show-only", "templates/compositecontroller.yaml", "--set", "podCIDRs={10.244.0.0/16}")
	if err != nil {
		return nil, fmt.Errorf("helm template: %w\n%s", err, out)
	}
	js, err := kyaml.ToJSON(out)
	if err != nil {
		return nil, err
	}
	var cc obj
	if err := decodeJSON(js, &cc); err != nil {
		return nil, err
	}
	if cc["kind"] != "CompositeController" {
		return nil, fmt.Errorf("the chart's templates/compositecontroller.yaml renders a %v", cc["kind"])
	}
	return cc, nil
})

// compositeController is the CompositeController this sync runs under: the
// live object named m.controller, read on every sync as Metacontroller
// watches it (a changed spec rebuilds its controller), else the chart's.
func (m *metacontroller) compositeController(ctx context.Context) (obj, error) {
	if m.controller == "" {
		return chartController()
	}
	cc, err := m.kube.get(ctx, "/apis/metacontroller.k8s.io/v1alpha1/compositecontrollers/"+m.controller)
	if isCode(err, http.StatusNotFound) {
		return nil, fmt.Errorf("%s: %w", m.controller, errNoCompositeController)
	}
	return cc, err
}

// errNoCompositeController: the CompositeController is gone (its chart
// uninstalled), so Metacontroller syncs nothing and changes nothing.
var errNoCompositeController = errors.New("no CompositeController: Metacontroller syncs nothing")

// hookVersion is the version of one of cc's hooks: "v1" when unset, as
// HookVersion's CRD default and GetVersion have it.
func hookVersion(cc obj, hook string) string {
	if v, _ := dig(cc, "spec", "hooks", hook, "version").(string); v != "" {
		return v
	}
	return "v1"
}

// strictAnswers says whether cc's sync hook answers are decoded strictly:
// webhook.responseUnMarshallMode when set, else strict for a v2 hook and
// loose for a v1 hook (pkg/hooks/webhook.go, responseUnmarshallMode).
func strictAnswers(cc obj) bool {
	switch dig(cc, "spec", "hooks", "sync", "webhook", "responseUnMarshallMode") {
	case "strict":
		return true
	case "loose":
		return false
	}
	return hookVersion(cc, "sync") == "v2"
}

// requestMap is the children or related map of a sync request being built:
// group key → object key → object.
type requestMap map[string]obj

// initGroup makes the group present even when nothing lands in it: a group
// key exists for every child rule and every related rule.
func (r requestMap) initGroup(group string) {
	if r[group] == nil {
		r[group] = obj{}
	}
}

// insert adds o to group as a request to a sync hook at syncVersion carries
// it for a parent in parentNS (empty: cluster-scoped):
//   - v2 (composite/api/v2 builder, UniformObjectMap): every object, keyed
//     namespace/name, or name when cluster-scoped;
//   - v1 (composite/api/v1 builder, UniformObjectMap.Convert to a
//     RelativeObjectMap): for a namespaced parent only objects of its own
//     namespace, keyed by name — a related object of another namespace or a
//     cluster-scoped one is left out, its group kept (metacontroller/metacontroller@v4.17.2
//     pkg/controller/common/api/v2/common.go); for a cluster-scoped parent every object,
//     keyed namespace/name when namespaced (relativeName).
func (r requestMap) insert(syncVersion, parentNS, group string, o obj) {
	r.initGroup(group)
	name, _ := dig(o, "metadata", "name").(string)
	ns, _ := dig(o, "metadata", "namespace").(string)
	key := name
	switch {
	case syncVersion == "v2":
		if ns != "" {
			key = ns + "/" + name
		}
	case parentNS != "":
		if ns != parentNS {
			return
		}
	case ns != "":
		key = ns + "/" + name
	}
	r[group][key] = o
}

// asObj is r as a request field.
func (r requestMap) asObj() obj {
	out := obj{}
	for g, objs := range r {
		out[g] = objs
	}
	return out
}

// answerFields are the fields of a sync answer, v1.CompositeHookResponse and
// v2.CompositeHookResponse alike (composite/api/v1/hooks.go,
// composite/api/v2/hooks.go): status, children, resyncAfterSeconds,
// finalized.
var answerFields = map[string]bool{"status": true, "children": true, "resyncAfterSeconds": true, "finalized": true}

// decodeAnswer reads a sync answer as Metacontroller's hook client does
// (pkg/hooks/webhook.go): field names are case-sensitive (sigs.k8s.io/json);
// in loose mode an unknown field is ignored, in strict mode an unknown or
// duplicate field fails the sync. A status that is not an object and
// children that are not an array of objects with apiVersion and kind are
// refused here as the bugs they are: null would wipe the status or delete
// every child.
func decodeAnswer(raw []byte, strict bool) (obj, error) {
	if strict {
		if err := duplicateField(raw); err != nil {
			return nil, fmt.Errorf("strict decoding: %w", err)
		}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("decoding the answer: %w", err)
	}
	resp := obj{}
	for k, v := range fields {
		if !answerFields[k] {
			if strict {
				return nil, fmt.Errorf("strict decoding: unknown field %q", k)
			}
			continue
		}
		var val any
		if err := decodeJSON(v, &val); err != nil {
			return nil, err
		}
		resp[k] = val
	}
	if _, ok := resp["status"].(map[string]any); !ok {
		return nil, fmt.Errorf("sync answered status %T, want an object (null wipes the status)", resp["status"])
	}
	children, ok := resp["children"].([]any)
	if !ok {
		return nil, fmt.Errorf("sync answered children %T, want an array (null deletes every child)", resp["children"])
	}
	for i, c := range children {
		c, ok := c.(map[string]any)
		if !ok || c["apiVersion"] == nil || c["kind"] == nil {
			return nil, fmt.Errorf("child %d has no apiVersion or kind", i)
		}
	}
	return resp, nil
}

// duplicateField finds an object key given twice anywhere in raw.
func duplicateField(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	type frame struct {
		object bool
		keys   map[string]bool
		expect bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if top != nil && top.object {
					top.expect = true
				}
				stack = append(stack, &frame{object: t == '{', keys: map[string]bool{}, expect: t == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if top != nil && top.object && top.expect {
				if top.keys[t] {
					return fmt.Errorf("duplicate field %q", t)
				}
				top.keys[t] = true
				top.expect = false
				continue
			}
		}
		if top != nil && top.object {
			top.expect = true
		}
	}
}

// kindOf is the kind a resource of apiVersion names, from discovery.
func (m *metacontroller) kindOf(ctx context.Context, apiVersion, resource string) (string, error) {
	p := "/apis/" + apiVersion
	if !strings.Contains(apiVersion, "/") {
		p = "/api/" + apiVersion
	}
	var list struct {
		Resources []struct{ Name, Kind string } `json:"resources"`
	}
	if err := m.kube.do(ctx, http.MethodGet, p, "", nil, &list); err != nil {
		return "", fmt.Errorf("discovering %s %s: %w", apiVersion, resource, err)
	}
	for _, res := range list.Resources {
		if res.Name == resource {
			return res.Kind, nil
		}
	}
	return "", fmt.Errorf("the API server serves no %s %q", apiVersion, resource)
}
