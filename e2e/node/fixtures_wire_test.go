//go:build e2e

package node

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
	"github.com/stackdome/stackdome/internal/mcrequest"
)

// wireFixtures are the fixtures whose spec runs on the node and whose pods
// the controllers make as the fixture has them: a public Service with error
// pages, a private one with non-canonical quantities, a StatefulService
// (OrderedReady makes only pod 0), one using ConfigMaps and Secrets, and a
// Job. Their images are the fixtures' own, which the node does not have:
// every pod stays Pending, and pods are compared by the fields the hook
// reads only (a request is read within seconds, before a pull fails).
var wireFixtures = []string{"serving", "server-defaulted", "stateful-storage", "config-follows", "job-complete"}

// TestFixturesMatchTheWire proves the generator's requests
// (hooks/fixturegen_*_test.go, internal/mcrequest) have the shape of what the
// node's Metacontroller v4.17.2 sends, read from its log (NodeFixture.TraceHooks): for
// each of wireFixtures it makes the fixture's objects on the cluster (its
// parent's spec, the team's ConfigMaps, Secrets and Middlewares it relates),
// waits for a sync request whose children and related keys are the
// fixture's, and compares:
//
//   - the controller's child resources and hook versions;
//   - the groups of children and related objects, and the keys in each
//     (namespaces as placeholders, pods by count: their names are random);
//   - the fields the hook reads (hooks/internal/observed) present in the
//     fixture exactly when on the wire, and each child's last-applied
//     annotation holding the same fields;
//   - the server's defaults: mcrequest.Default applied to what Metacontroller
//     applied equals each stored child's spec, but for the allocated
//     ClusterIP, and the fixture's child has the stored child's fields.
//
// Statuses are not compared: a fixture's is the state its case shows, the
// wire's is a node whose pods cannot start.
func TestFixturesMatchTheWire(t *testing.T) {
	f := framework.NewNodeFixture(t)
	hooks := f.TraceHooks()
	rel := f.InstallChart()
	for _, name := range wireFixtures {
		t.Run(name, func(t *testing.T) {
			f := framework.NewNodeFixture(t)
			var fx obj
			b, err := os.ReadFile(filepath.Join(f.Root, "testdata", "sync", name+".request.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &fx); err != nil {
				t.Fatal(err)
			}
			ns := f.Namespace(nil)
			t.Cleanup(func() { f.DescribePods(ns) })
			n := wireNames{fixtureApp: framework.Dig(fx, "parent", "metadata", "namespace").(string), fixtureRelease: mcrequest.ReleaseNamespace,
				wireApp: ns, wireRelease: rel.NS}
			createRelatedOf(t, ns, fx)
			parent := framework.Dig(fx, "parent", "metadata", "name").(string)
			since := time.Now()
			if _, err := f.Kube.Create(t.Context(), framework.SRPath(ns, ""), obj{
				"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource",
				"metadata": obj{"name": parent}, "spec": framework.Dig(fx, "parent", "spec")}); err != nil {
				t.Fatal(err)
			}
			req := hooks.WaitSyncRequest(t, ns, parent, since, 2*time.Minute, "a sync request with the fixture's keys and settled children", func(req obj) error {
				if err := n.sameKeys(fx, req); err != nil {
					return err
				}
				return n.sameLastApplied(fx, req)
			})
			for _, e := range n.compare(fx, req) {
				t.Error(e)
			}
		})
	}
}

// createRelatedOf creates the fixture's related ConfigMaps, Secrets and
// Middlewares in ns, as a team would: their content, not their metadata.
func createRelatedOf(t *testing.T, ns string, fx obj) {
	t.Helper()
	f := framework.NewNodeFixture(t)
	for group, path := range map[string]string{
		"ConfigMap.v1": "/api/v1/namespaces/" + ns + "/configmaps", "Secret.v1": "/api/v1/namespaces/" + ns + "/secrets",
		"Middleware.traefik.io/v1alpha1": "/apis/traefik.io/v1alpha1/namespaces/" + ns + "/middlewares",
	} {
		objs, _ := framework.Dig(fx, "related", group).(map[string]any)
		for _, o := range objs {
			o := o.(map[string]any)
			body := obj{"apiVersion": o["apiVersion"], "kind": o["kind"], "metadata": obj{"name": framework.Dig(o, "metadata", "name")}}
			for _, field := range []string{"data", "binaryData", "type", "spec"} {
				if v, ok := o[field]; ok {
					body[field] = v
				}
			}
			if _, err := f.Kube.Create(t.Context(), path, body); err != nil {
				t.Fatalf("creating %s %v: %v", group, body["metadata"], err)
			}
		}
	}
}

// wireNames maps the namespaces of a fixture and of the wire to the same
// placeholders: the app's and the chart release's.
type wireNames struct{ fixtureApp, fixtureRelease, wireApp, wireRelease string }

func (n wireNames) key(k string, wire bool) string {
	app, release := n.fixtureApp, n.fixtureRelease
	if wire {
		app, release = n.wireApp, n.wireRelease
	}
	ns, name, ok := strings.Cut(k, "/")
	if !ok {
		return k
	}
	switch ns {
	case app:
		ns = "$app"
	case release:
		ns = "$release"
	}
	return ns + "/" + name
}

// keys is each group's keys of a request's children or related, pods as
// "$app/pod" once per pod.
func (n wireNames) keys(req obj, field string, wire bool) map[string][]string {
	out := map[string][]string{}
	groups, _ := req[field].(map[string]any)
	for g, objs := range groups {
		out[g] = []string{}
		for k := range objs.(map[string]any) {
			if g == "Pod.v1" {
				k = "$app/pod"
			} else {
				k = n.key(k, wire)
			}
			out[g] = append(out[g], k)
		}
		sort.Strings(out[g])
	}
	return out
}

// sameKeys is nil when the wire request has the fixture's groups and keys.
func (n wireNames) sameKeys(fx, wire obj) error {
	for _, field := range []string{"children", "related"} {
		if fk, wk := n.keys(fx, field, false), n.keys(wire, field, true); !reflect.DeepEqual(fk, wk) {
			return fmt.Errorf("%s: fixture %v, wire %v", field, fk, wk)
		}
	}
	return nil
}

// sameLastApplied is nil when every child of the wire request was applied
// with the fields of the fixture's: the children have settled (the
// IngressRoute refers to the errors Middleware once it exists).
func (n wireNames) sameLastApplied(fx, wire obj) error {
	fg, _ := fx["children"].(map[string]any)
	wg, _ := wire["children"].(map[string]any)
	for g, objs := range fg {
		wobjs := map[string]any{}
		for k, o := range wg[g].(map[string]any) {
			wobjs[n.key(k, true)] = o
		}
		for k, o := range objs.(map[string]any) {
			w, _ := wobjs[n.key(k, false)].(map[string]any)
			if d := pathsDiffer(g+" "+k, leaves(lastApplied(o.(map[string]any))), leaves(lastApplied(w))); len(d) > 0 {
				return fmt.Errorf("not settled: %s", strings.Join(d, "; "))
			}
		}
	}
	return nil
}

// compare lists every difference of shape between the fixture's request and
// the wire's (sameKeys holds).
func (n wireNames) compare(fx, wire obj) []string {
	var errs []string
	for _, field := range []string{"childResources"} {
		if a, b := framework.Dig(fx, "controller", "spec", field), framework.Dig(wire, "controller", "spec", field); !reflect.DeepEqual(a, b) {
			errs = append(errs, fmt.Sprintf("controller %s: fixture %s, wire %s", field, framework.MustJSON(a), framework.MustJSON(b)))
		}
	}
	for _, h := range []string{"sync", "customize"} {
		if a, b := framework.Dig(fx, "controller", "spec", "hooks", h, "version"), framework.Dig(wire, "controller", "spec", "hooks", h, "version"); a != b {
			errs = append(errs, fmt.Sprintf("%s hook version: fixture %v, wire %v", h, a, b))
		}
	}
	errs = append(errs, pathsDiffer("parent spec", leaves(framework.Dig(fx, "parent", "spec")), leaves(framework.Dig(wire, "parent", "spec")))...)
	errs = append(errs, n.present("parent", framework.Dig(fx, "parent").(map[string]any), framework.Dig(wire, "parent").(map[string]any), parentReads)...)
	for _, field := range []string{"children", "related"} {
		fg, _ := fx[field].(map[string]any)
		wg, _ := wire[field].(map[string]any)
		for g, objs := range fg {
			if g == "Pod.v1" {
				errs = append(errs, n.pods(objs.(map[string]any), wg[g].(map[string]any))...)
				continue
			}
			wobjs := map[string]any{}
			for k, o := range wg[g].(map[string]any) {
				wobjs[n.key(k, true)] = o
			}
			for k, o := range objs.(map[string]any) {
				what := field + " " + g + " " + n.key(k, false)
				f, w := o.(map[string]any), wobjs[n.key(k, false)].(map[string]any)
				if field == "related" {
					errs = append(errs, n.present(what, f, w, relatedReads)...)
					continue
				}
				errs = append(errs, n.child(what, f, w)...)
			}
		}
	}
	return errs
}

// The fields the hook reads (hooks/internal/observed), by object.
var (
	parentReads  = []string{"metadata.name", "metadata.namespace", "metadata.uid", "metadata.generation", "metadata.creationTimestamp"}
	relatedReads = []string{"metadata.name", "metadata.namespace", "metadata.uid", "data", "binaryData", "spec.clusterIP", "spec.clusterIPs"}
	podReads     = []string{"metadata.name", "metadata.labels", "metadata.annotations.stackdome.io/revision", "metadata.ownerReferences", "status.phase"}
	childReads   = []string{"metadata.name", "metadata.namespace", "metadata.uid", "metadata.generation", "metadata.creationTimestamp",
		"metadata.labels.controller-uid", "metadata.annotations." + mcrequest.LastApplied, "spec.replicas",
		"spec.template.metadata.annotations", "spec.jobTemplate.spec.template.metadata.annotations",
		"spec.podManagementPolicy", "spec.volumeClaimTemplates", "spec.routes", "spec.errors.service", "spec.stripPrefix.prefixes", "endpoints"}
)

// present reports each of paths present in one of f and w only.
func (n wireNames) present(what string, f, w map[string]any, paths []string) []string {
	var errs []string
	for _, p := range paths {
		_, inF := framework.DigPath(f, p)
		_, inW := framework.DigPath(w, p)
		if inF != inW {
			errs = append(errs, fmt.Sprintf("%s: %s in the fixture %v, on the wire %v", what, p, inF, inW))
		}
	}
	return errs
}

// pods: every pod of either has the fields the hook reads of a pod the
// other's first pod has (the wire's are Pending: the node has not their
// images).
func (n wireNames) pods(f, w map[string]any) []string {
	first := func(m map[string]any) map[string]any {
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range m {
				if !yield(k) {
					return
				}
			}
		})
		return m[keys[0]].(map[string]any)
	}
	if len(f) == 0 || len(w) == 0 {
		return nil
	}
	return n.present("related Pod.v1", first(f), first(w), podReads)
}

// child compares an observed child of the fixture with the wire's: the
// fields the hook reads, the last-applied annotation's fields, and the
// server's defaults.
func (n wireNames) child(what string, f, w map[string]any) []string {
	errs := n.present(what, f, w, childReads)
	fla, wla := lastApplied(f), lastApplied(w)
	errs = append(errs, pathsDiffer(what+" last-applied", leaves(fla), leaves(wla))...)
	if wla == nil {
		return errs
	}
	// What the generator writes into what Metacontroller applied.
	g := mcrequest.Clone(wla)
	md := mcrequest.Meta(g)
	md["uid"] = framework.Dig(w, "metadata", "uid")
	mcrequest.Default(g)
	wspec, _ := w["spec"].(map[string]any)
	gl, wl, fl := leaves(g["spec"]), leaves(wspec), leaves(f["spec"])
	for _, l := range []map[string]any{gl, wl, fl} {
		maps.DeleteFunc(l, func(p string, _ any) bool { return allocated(p) })
	}
	for p, v := range gl {
		if wv, ok := wl[p]; !ok || framework.MustJSON(v) != framework.MustJSON(wv) {
			errs = append(errs, fmt.Sprintf("%s: mcrequest.Default writes spec.%s = %s, the API server stored %s", what, p, framework.MustJSON(v), framework.MustJSON(wl[p])))
		}
	}
	for p, v := range wl {
		if _, ok := gl[p]; !ok {
			errs = append(errs, fmt.Sprintf("%s: the API server stored spec.%s = %s, mcrequest.Default does not write it", what, p, framework.MustJSON(v)))
		}
	}
	errs = append(errs, pathsDiffer(what+" spec", fl, wl)...)
	return errs
}

// allocated are the spec fields the API server allocates per object:
// the generator writes a stand-in.
// The IP families are the cluster's (the suite's is dual-stack, the
// fixtures' IPv4 only).
func allocated(p string) bool {
	return p == "clusterIP" || strings.HasPrefix(p, "clusterIPs") || strings.HasPrefix(p, "ipFamilies")
}

func lastApplied(o map[string]any) map[string]any {
	s, _ := framework.Dig(o, "metadata", "annotations", mcrequest.LastApplied).(string)
	if s == "" {
		return nil
	}
	var la map[string]any
	if json.Unmarshal([]byte(s), &la) != nil {
		return nil
	}
	return la
}

// pathsDiffer reports the leaf paths of one of f and w only.
func pathsDiffer(what string, f, w map[string]any) []string {
	var errs []string
	for p := range f {
		if _, ok := w[p]; !ok {
			errs = append(errs, fmt.Sprintf("%s: %s in the fixture, not on the wire", what, p))
		}
	}
	for p := range w {
		if _, ok := f[p]; !ok {
			errs = append(errs, fmt.Sprintf("%s: %s on the wire, not in the fixture", what, p))
		}
	}
	sort.Strings(errs)
	return errs
}

// leaves flattens v to its leaf paths ("a.b[0].c") and values; an empty
// object or list is a leaf.
func leaves(v any) map[string]any {
	out := map[string]any{}
	var walk func(p string, v any)
	walk = func(p string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 && p != "" {
				out[p] = x
			}
			for k, e := range x {
				q := k
				if p != "" {
					q = p + "." + k
				}
				walk(q, e)
			}
		case []any:
			if len(x) == 0 {
				out[p] = x
			}
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", p, i), e)
			}
		default:
			out[p] = v
		}
	}
	if v != nil {
		walk("", v)
	}
	return out
}
