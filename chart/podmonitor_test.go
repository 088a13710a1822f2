package chart

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stackdome/stackdome/hooks"
	"github.com/stackdome/stackdome/metacontroller"
)

// TestPodMonitorsOnlyWhereEnabled: the CompositeController lists podmonitors
// only with appDefaults.podMonitor.enabled (Metacontroller refuses a child
// kind the cluster does not serve), and the hook then gets --pod-monitors.
func TestPodMonitorsOnlyWhereEnabled(t *testing.T) {
	for _, tc := range []struct {
		set  []string
		want bool
	}{{nil, false}, {[]string{"appDefaults.podMonitor.enabled=true"}, true}} {
		cc := find[*compositeController](t, decode(t, render(t, install{set: tc.set})), "CompositeController")
		var kinds []string
		for _, c := range cc.Spec.ChildResources {
			kinds = append(kinds, c.APIVersion+" "+c.Resource)
		}
		var want []string
		for _, c := range hooks.ChildResources {
			want = append(want, c.APIVersion+" "+c.Resource)
		}
		if tc.want {
			for _, c := range hooks.OptionalChildResources {
				want = append(want, c.APIVersion+" "+c.Resource)
			}
		}
		slices.Sort(kinds)
		slices.Sort(want)
		if diff := cmp.Diff(want, kinds); diff != "" {
			t.Errorf("%v: childResources (-want +got):\n%s", tc.set, diff)
		}
	}
}

// TestPodMonitorMatchesTheRealCRD: the PodMonitor Sync returns with
// --pod-monitors for testdata/sync/metrics-port (whose golden answer, from a
// default install, has none) is valid against the Prometheus Operator
// v0.85.0 podmonitors CRD, and scrapes the named port and path of the app's
// pods. The e2e control plane serves no PodMonitor CRD, so this is its
// stored-shape check.
func TestPodMonitorMatchesTheRealCRD(t *testing.T) {
	dir, err := moduleDir("github.com/prometheus-operator/prometheus-operator@" + prometheusOperatorVersion)
	if err != nil {
		missing(t, "Prometheus Operator CRDs: %v", err)
	}
	schemas := crdSchemas{}
	schemas.load(t, filepath.Join(dir, "example", "prometheus-operator-crd", "monitoring.coreos.com_podmonitors.yaml"))
	s := schemas["monitoring.coreos.com/v1 PodMonitor"]
	if s == nil {
		t.Fatal("no PodMonitor CRD schema")
	}
	b, err := os.ReadFile(filepath.Join(syncGoldens, "metrics-port.request.json"))
	if err != nil {
		t.Fatal(err)
	}
	var req metacontroller.SyncRequest
	if err := json.Unmarshal(b, &req); err != nil {
		t.Fatal(err)
	}
	for _, on := range []bool{false, true} {
		cfg := hooks.DefaultConfig()
		cfg.PodMonitors = on
		resp, _, err := cfg.Sync(&req, nil, time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
		if err != nil {
			t.Fatal(err)
		}
		var monitors []any
		for _, c := range resp.Children {
			raw, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			var v map[string]any
			if err := dec.Decode(&v); err != nil {
				t.Fatal(err)
			}
			if v["kind"] == "PodMonitor" {
				monitors = append(monitors, v)
			}
		}
		if !on {
			if len(monitors) > 0 {
				t.Errorf("a PodMonitor without --pod-monitors: %v", monitors)
			}
			continue
		}
		want := []any{map[string]any{
			"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor",
			"metadata": map[string]any{"name": "catalog", "labels": map[string]any{
				"app.kubernetes.io/instance": "catalog", "app.kubernetes.io/managed-by": "stackdome", "app.kubernetes.io/name": "catalog"}},
			"spec": map[string]any{
				"selector":            map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/instance": "catalog", "app.kubernetes.io/managed-by": "stackdome"}},
				"podMetricsEndpoints": []any{map[string]any{"port": "metrics", "path": "/metrics"}},
			},
		}}
		if diff := cmp.Diff(want, monitors); diff != "" {
			t.Errorf("PodMonitor (-want +got):\n%s", diff)
		}
		for _, m := range monitors {
			for _, e := range s.validateObject("PodMonitor/catalog", m) {
				t.Error(e)
			}
		}
	}
}
