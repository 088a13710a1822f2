package monitoring

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
// metric needs, and the series it yields — computed by evalKSM
// (ksm_series_test.go), which mirrors registry_factory.go for the metric
// types used — are what the alerts and the dashboard query.

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
