package monitoring

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// What kube-state-metrics makes of StackResources, computed as its
// registry_factory.go does for the metric types the config uses.

// series is one metric sample kube-state-metrics would serve.
type series struct {
	name   string
	labels map[string]string
	value  float64
}

// evalKSM computes the series kube-state-metrics serves for obj under r,
// following registry_factory.go: a resource's labelsFromPath are read from
// the object and yield to the metric's own; a StateSet over an array yields
// one series per element and list entry, 1 where the element's valueFrom
// equals the entry, and skips a missing status silently; an Info over an
// object yields one series with its labels, plus one for each child of the
// object under which any of its label paths also resolves; a series without
// any label from its path is dropped. Every series carries the
// customresource_group/version/kind labels.
func evalKSM(r ksmResource, obj map[string]any) []series {
	base := map[string]string{
		"customresource_group":   r.GroupVersionKind.Group,
		"customresource_version": r.GroupVersionKind.Version,
		"customresource_kind":    r.GroupVersionKind.Kind,
	}
	addPathLabels(obj, r.LabelsFromPath, base)
	var out []series
	emit := func(name string, own map[string]string, v float64) {
		l := maps.Clone(base)
		maps.Copy(l, own)
		out = append(out, series{name: *r.MetricNamePrefix + "_" + name, labels: l, value: v})
	}
	for _, m := range r.Metrics {
		switch m.Each.Type {
		case "StateSet":
			ss := m.Each.StateSet
			elems, _ := get(obj, ss.Path).([]any)
			for _, e := range elems {
				value, ok := get(e, ss.ValueFrom).(string)
				if !ok {
					continue
				}
				for _, entry := range ss.List {
					l := map[string]string{ss.LabelName: entry}
					addPathLabels(e, ss.LabelsFromPath, l)
					emit(m.Name, l, map[bool]float64{true: 1, false: 0}[value == entry])
				}
			}
		case "Info":
			v := get(obj, m.Each.Info.Path)
			m2, ok := v.(map[string]any)
			if !ok {
				continue
			}
			own := map[string]string{}
			addPathLabels(m2, m.Each.Info.LabelsFromPath, own)
			if len(own) > 0 {
				emit(m.Name, own, 1)
			}
			for _, child := range m2 {
				l := map[string]string{}
				addPathLabels(child, m.Each.Info.LabelsFromPath, l)
				if len(l) > 0 {
					emit(m.Name, l, 1)
				}
			}
		}
	}
	return out
}

func get(v any, path []string) any {
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func addPathLabels(v any, paths map[string][]string, into map[string]string) {
	for l, p := range paths {
		if got := get(v, p); got != nil {
			into[l] = fmt.Sprint(got)
		}
	}
}

// sampleObjects are StackResources as the API server stores them: each sync
// fixture's parent with the status stackdome answered for it.
func sampleObjects(t *testing.T) map[string]map[string]any {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "testdata", "sync", "*.request.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sync fixtures: %v", err)
	}
	objs := map[string]map[string]any{}
	for _, f := range files {
		var req struct{ Parent map[string]any }
		var resp struct{ Status map[string]any }
		for file, v := range map[string]any{f: &req, strings.Replace(f, ".request.", ".response.", 1): &resp} {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, v); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
		}
		req.Parent["status"] = resp.Status
		objs[filepath.Base(f)] = req.Parent
	}
	return objs
}

// TestKubeStateMetricsSeries computes the series of every sync fixture's
// StackResource and checks their shape: per resource one info series with
// its type and revision, and per condition one series per status, 1 for the
// status the condition has, each with the condition's reason.
func TestKubeStateMetricsSeries(t *testing.T) {
	r := loadKSMConfig(t).Spec.Resources[0]
	seen := map[string]int{}
	kstatus := []string{"Available", "Converged", "Stalled", "Reconciling"}
	optional := slices.DeleteFunc(hooksConstants(t)["Cond"], func(c string) bool { return slices.Contains(kstatus, c) })
	for name, obj := range sampleObjects(t) {
		t.Run(name, func(t *testing.T) {
			meta := obj["metadata"].(map[string]any)
			status, _ := obj["status"].(map[string]any)
			conds, _ := status["conditions"].([]any)
			var want []string
			want = append(want, fmt.Sprintf("stackdome_stackresource_info{name=%s namespace=%s revision=%v type=%v} 1",
				meta["name"], meta["namespace"], status["revision"], get(obj, []string{"spec", "type"})))
			for _, c := range conds {
				c := c.(map[string]any)
				for _, s := range []string{"True", "False", "Unknown"} {
					v := 0
					if c["status"] == s {
						v = 1
					}
					want = append(want, fmt.Sprintf("stackdome_stackresource_condition{name=%s namespace=%s reason=%s status=%s type=%s} %d",
						meta["name"], meta["namespace"], c["reason"], s, c["type"], v))
				}
			}
			var got []string
			for _, s := range evalKSM(r, obj) {
				for k, v := range map[string]string{"customresource_group": "stackdome.io", "customresource_version": "v1alpha1", "customresource_kind": "StackResource"} {
					if s.labels[k] != v {
						t.Errorf("%s: %s=%q", s.name, k, s.labels[k])
					}
					delete(s.labels, k)
				}
				var kv []string
				for _, k := range slices.Sorted(maps.Keys(s.labels)) {
					kv = append(kv, k+"="+s.labels[k])
				}
				got = append(got, fmt.Sprintf("%s{%s} %g", s.name, strings.Join(kv, " "), s.value))
			}
			slices.Sort(got)
			slices.Sort(want)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("series (-want +got):\n%s", diff)
			}
			var types []string
			for _, c := range conds {
				types = append(types, fmt.Sprint(c.(map[string]any)["type"]))
			}
			// The four kstatus conditions always, in that order; then, in
			// schema's order, only those an app's spec asks for.
			if len(types) < 4 || !slices.Equal(types[:4], kstatus) || !isSubsequence(types[4:], optional) {
				t.Errorf("conditions %q, want %q, then any of %q in that order", types, kstatus, optional)
			}
			for _, c := range types[min(4, len(types)):] {
				seen[c]++
			}
		})
	}
	// The alerts on optional conditions read series only some statuses give.
	for _, c := range []string{"ErrorPages", "Middlewares"} {
		if seen[c] == 0 {
			t.Errorf("no fixture's status carries the %s condition", c)
		}
	}
}

// isSubsequence says every item of sub appears in seq, in seq's order.
func isSubsequence(sub, seq []string) bool {
	i := 0
	for _, s := range seq {
		if i < len(sub) && sub[i] == s {
			i++
		}
	}
	return i == len(sub)
}

// ksmCatalog is what queries may read from kube-state-metrics: the series
// evalKSM computes for the fixtures, with the values a query may match on
// (condition types and reasons are hooks' constants, statuses the list), and
// kube_deployment_status_replicas_available from its default collectors.
func ksmCatalog(t *testing.T) catalog {
	t.Helper()
	r := loadKSMConfig(t).Spec.Resources[0]
	c := catalog{}
	for _, obj := range sampleObjects(t) {
		for _, s := range evalKSM(r, obj) {
			c.add(s.name, slices.Collect(maps.Keys(s.labels))...)
		}
	}
	consts := hooksConstants(t)
	c.closed("stackdome_stackresource_condition", "type", consts["Cond"]...)
	c.closed("stackdome_stackresource_condition", "reason", consts["Reason"]...)
	c.closed("stackdome_stackresource_condition", "status", "True", "False", "Unknown")
	c.add("kube_deployment_status_replicas_available", "namespace", "deployment")
	return c
}

// hooksConstants reads the string constants of package hooks, by prefix
// (Cond, Reason), from its source.
func hooksConstants(t *testing.T) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(repoRoot, "schema", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, _ := strconv.Unquote(lit.Value)
					for _, prefix := range []string{"Cond", "Reason"} {
						if strings.HasPrefix(n.Name, prefix) {
							out[prefix] = append(out[prefix], v)
						}
					}
				}
			}
		}
	}
	if !slices.Contains(out["Cond"], "Available") || !slices.Contains(out["Cond"], "Stalled") || len(out["Reason"]) == 0 {
		t.Fatalf("hooks' condition types %q and reasons %q", out["Cond"], out["Reason"])
	}
	return out
}
