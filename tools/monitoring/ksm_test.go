package monitoring

import (
	"bytes"
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
	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// kube-state-metrics is not served by the Go module proxy here, so it cannot
// run in a test. What can be proven without it is proven: the config decodes
// into kube-state-metrics' config types (mirrored below from
// pkg/customresourcestate/config.go and config_metrics_types.go, v2.12+),
// every path it reads exists in the generated CRD's schema with the type the
// metric needs, and the series it yields — computed by evalKSM, which mirrors
// registry_factory.go for the metric types used — are what the alerts and the
// dashboard query.

type ksmConfig struct {
	Kind string `json:"kind" yaml:"kind"`
	Spec struct {
		Resources []ksmResource `json:"resources" yaml:"resources"`
	} `json:"spec" yaml:"spec"`
}

type ksmResource struct {
	CommonLabels     map[string]string   `json:"commonLabels,omitempty" yaml:"commonLabels,omitempty"`
	LabelsFromPath   map[string][]string `json:"labelsFromPath,omitempty" yaml:"labelsFromPath,omitempty"`
	MetricNamePrefix *string             `json:"metricNamePrefix,omitempty" yaml:"metricNamePrefix,omitempty"`
	GroupVersionKind struct {
		Group   string `json:"group" yaml:"group"`
		Version string `json:"version" yaml:"version"`
		Kind    string `json:"kind" yaml:"kind"`
	} `json:"groupVersionKind" yaml:"groupVersionKind"`
	ResourcePlural string         `json:"resourcePlural,omitempty" yaml:"resourcePlural,omitempty"`
	Metrics        []ksmGenerator `json:"metrics" yaml:"metrics"`
	ErrorLogV      int            `json:"errorLogV,omitempty" yaml:"errorLogV,omitempty"`
}

type ksmGenerator struct {
	Name           string              `json:"name" yaml:"name"`
	Help           string              `json:"help" yaml:"help"`
	Each           ksmMetric           `json:"each" yaml:"each"`
	CommonLabels   map[string]string   `json:"commonLabels,omitempty" yaml:"commonLabels,omitempty"`
	LabelsFromPath map[string][]string `json:"labelsFromPath,omitempty" yaml:"labelsFromPath,omitempty"`
	ErrorLogV      int                 `json:"errorLogV,omitempty" yaml:"errorLogV,omitempty"`
}

type ksmMetric struct {
	Type  string `json:"type" yaml:"type"`
	Gauge *struct {
		Path           []string            `json:"path" yaml:"path"`
		LabelsFromPath map[string][]string `json:"labelsFromPath" yaml:"labelsFromPath"`
		LabelFromKey   string              `json:"labelFromKey" yaml:"labelFromKey"`
		ValueFrom      []string            `json:"valueFrom" yaml:"valueFrom"`
		NilIsZero      bool                `json:"nilIsZero" yaml:"nilIsZero"`
	} `json:"gauge,omitempty" yaml:"gauge,omitempty"`
	StateSet *struct {
		Path           []string            `json:"path" yaml:"path"`
		LabelsFromPath map[string][]string `json:"labelsFromPath" yaml:"labelsFromPath"`
		List           []string            `json:"list" yaml:"list"`
		LabelName      string              `json:"labelName" yaml:"labelName"`
		ValueFrom      []string            `json:"valueFrom" yaml:"valueFrom"`
	} `json:"stateSet,omitempty" yaml:"stateSet,omitempty"`
	Info *struct {
		Path           []string            `json:"path" yaml:"path"`
		LabelsFromPath map[string][]string `json:"labelsFromPath" yaml:"labelsFromPath"`
		LabelFromKey   string              `json:"labelFromKey" yaml:"labelFromKey"`
	} `json:"info,omitempty" yaml:"info,omitempty"`
}

// loadKSMConfig decodes the config the chart renders as kube-state-metrics
// does — YAML v3, field names case-sensitive — refusing any field it does not
// know (it would ignore it silently).
func loadKSMConfig(t *testing.T) ksmConfig {
	t.Helper()
	var c ksmConfig
	dec := yamlv3.NewDecoder(bytes.NewReader(kubeStateMetricsConfig(t)))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		t.Fatalf("kube-state-metrics config: %v", err)
	}
	if c.Kind != "CustomResourceStateMetrics" || len(c.Spec.Resources) != 1 {
		t.Fatalf("want one CustomResourceStateMetrics resource, got kind %q with %d", c.Kind, len(c.Spec.Resources))
	}
	return c
}

// schema is the part of a CRD's structural schema the paths walk.
type schema struct {
	Type       string             `json:"type"`
	Properties map[string]*schema `json:"properties"`
	Items      *schema            `json:"items"`
	Enum       []string           `json:"enum"`
}

type crd struct {
	Spec struct {
		Group string `json:"group"`
		Scope string `json:"scope"`
		Names struct {
			Kind   string `json:"kind"`
			Plural string `json:"plural"`
		} `json:"names"`
		Versions []struct {
			Name   string `json:"name"`
			Served bool   `json:"served"`
			Schema struct {
				OpenAPIV3Schema *schema `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

func loadCRD(t *testing.T) crd {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "schema", "crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c crd
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// objectMeta is what the API server gives every object's metadata; a CRD's
// schema says only "type: object" there.
var objectMeta = &schema{Type: "object", Properties: map[string]*schema{
	"name": {Type: "string"}, "namespace": {Type: "string"}, "uid": {Type: "string"},
	"labels": {Type: "object"}, "annotations": {Type: "object"},
}}

// walk follows path from s, the way kube-state-metrics resolves it.
func walk(s *schema, path []string) (*schema, error) {
	for i, p := range path {
		if s == nil {
			return nil, fmt.Errorf("%v: nothing at %q", path, strings.Join(path[:i], "."))
		}
		next := s.Properties[p]
		if i == 0 && p == "metadata" {
			next = objectMeta
		}
		if s.Type != "object" || next == nil {
			return nil, fmt.Errorf("%v: %q has no field %q", path, strings.Join(path[:i], "."), p)
		}
		s = next
	}
	return s, nil
}

// TestKubeStateMetricsConfigReadsTheCRD checks every path of the config
// against the StackResource CRD schema/crd.yaml serves: the resource it names,
// that label paths end at strings, that the StateSet iterates an array of
// objects and its list is exactly the enum of the field it compares.
func TestKubeStateMetricsConfigReadsTheCRD(t *testing.T) {
	cfg := loadKSMConfig(t)
	def := loadCRD(t)
	r := cfg.Spec.Resources[0]
	gvk := r.GroupVersionKind
	var root *schema
	for _, v := range def.Spec.Versions {
		if v.Name == gvk.Version && v.Served {
			root = v.Schema.OpenAPIV3Schema
		}
	}
	if gvk.Group != def.Spec.Group || gvk.Kind != def.Spec.Names.Kind || root == nil {
		t.Fatalf("config reads %s/%s %s, the CRD serves %s %s", gvk.Group, gvk.Version, gvk.Kind, def.Spec.Group, def.Spec.Names.Kind)
	}
	if r.ResourcePlural != def.Spec.Names.Plural {
		t.Errorf("resourcePlural %q, the CRD's plural is %q", r.ResourcePlural, def.Spec.Names.Plural)
	}
	if def.Spec.Scope != "Namespaced" && r.LabelsFromPath["namespace"] != nil {
		t.Errorf("a namespace label on a cluster-scoped resource")
	}
	scalar := func(where string, s *schema, path []string) {
		t.Helper()
		got, err := walk(s, path)
		if err != nil {
			t.Errorf("%s: %v", where, err)
			return
		}
		if got.Type != "string" {
			t.Errorf("%s: %v is a %s, want a string a label can hold", where, path, got.Type)
		}
	}
	for l, p := range r.LabelsFromPath {
		scalar("labelsFromPath "+l, root, p)
	}
	for _, m := range r.Metrics {
		switch m.Each.Type {
		case "StateSet":
			ss := m.Each.StateSet
			arr, err := walk(root, ss.Path)
			if err != nil {
				t.Errorf("%s: %v", m.Name, err)
				continue
			}
			if arr.Type != "array" || arr.Items == nil || arr.Items.Type != "object" {
				t.Errorf("%s: %v is a %s, want an array of objects (one state set each)", m.Name, ss.Path, arr.Type)
				continue
			}
			for l, p := range ss.LabelsFromPath {
				scalar(m.Name+" labelsFromPath "+l, arr.Items, p)
			}
			scalar(m.Name+" valueFrom", arr.Items, ss.ValueFrom)
			if v, err := walk(arr.Items, ss.ValueFrom); err == nil {
				if diff := cmp.Diff(slices.Sorted(slices.Values(v.Enum)), slices.Sorted(slices.Values(ss.List))); diff != "" {
					t.Errorf("%s: list must be exactly the values %v may take (-CRD enum +list):\n%s", m.Name, ss.ValueFrom, diff)
				}
			}
		case "Info":
			base, err := walk(root, m.Each.Info.Path)
			if err != nil {
				t.Errorf("%s: %v", m.Name, err)
				continue
			}
			for l, p := range m.Each.Info.LabelsFromPath {
				scalar(m.Name+" labelsFromPath "+l, base, p)
			}
		default:
			t.Errorf("%s: type %q: only StateSet and Info are checked here", m.Name, m.Each.Type)
		}
	}
}

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
			if len(conds) != 4 {
				t.Errorf("%d conditions, want Available, Converged, Stalled, Reconciling", len(conds))
			}
		})
	}
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
	files, err := filepath.Glob(filepath.Join(repoRoot, "hooks", "*.go"))
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
	if len(out["Cond"]) != 4 || len(out["Reason"]) == 0 {
		t.Fatalf("hooks' condition types %q and reasons %q", out["Cond"], out["Reason"])
	}
	return out
}

// TestKubeStateMetricsChartValues holds docs/kube-state-metrics-values.yaml
// to the chart and the CRD: it mounts the ConfigMap the chart renders (key
// config.yaml, which that chart reads), grants list and watch on the
// resource the config names, and keeps kube-state-metrics' labels.
func TestKubeStateMetricsChartValues(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "docs", "kube-state-metrics-values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		CustomResourceState struct {
			Enabled bool   `json:"enabled"`
			Create  *bool  `json:"create"`
			Name    string `json:"name"`
		} `json:"customResourceState"`
		RBAC struct {
			ExtraRules []struct {
				APIGroups []string `json:"apiGroups"`
				Resources []string `json:"resources"`
				Verbs     []string `json:"verbs"`
			} `json:"extraRules"`
		} `json:"rbac"`
		Prometheus struct {
			Monitor struct {
				Enabled     bool `json:"enabled"`
				HonorLabels bool `json:"honorLabels"`
				HTTP        struct {
					HonorLabels bool `json:"honorLabels"`
				} `json:"http"`
			} `json:"monitor"`
		} `json:"prometheus"`
	}
	if err := yaml.UnmarshalStrict(b, &v); err != nil {
		t.Fatal(err)
	}
	crs := v.CustomResourceState
	if !crs.Enabled || crs.Create == nil || *crs.Create {
		t.Errorf("customResourceState %+v: want enabled, create: false (the chart's ConfigMap is mounted)", crs)
	}
	var cm struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   map[string]any    `json:"metadata"`
		Data       map[string]string `json:"data"`
	}
	object(t, render(t, "kubeStateMetrics.enabled=true"), "ConfigMap", crs.Name, &cm)
	if cm.Data["config.yaml"] == "" {
		t.Errorf("ConfigMap %s has no config.yaml, the key kube-state-metrics' chart reads", crs.Name)
	}
	def := loadCRD(t)
	granted := map[string]bool{}
	for _, r := range v.RBAC.ExtraRules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, verb := range r.Verbs {
					granted[g+"/"+res+" "+verb] = true
				}
			}
		}
	}
	for _, want := range []string{
		def.Spec.Group + "/" + def.Spec.Names.Plural + " list", def.Spec.Group + "/" + def.Spec.Names.Plural + " watch",
		"apiextensions.k8s.io/customresourcedefinitions list", "apiextensions.k8s.io/customresourcedefinitions watch",
	} {
		if !granted[want] {
			t.Errorf("rbac.extraRules do not grant %s", want)
		}
	}
	if m := v.Prometheus.Monitor; !m.Enabled || !m.HonorLabels || !m.HTTP.HonorLabels {
		t.Errorf("prometheus.monitor %+v: the scrape must keep kube-state-metrics' namespace label", m)
	}
}
