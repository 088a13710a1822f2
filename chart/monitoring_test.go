package chart

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

// The monitoring objects' wiring: what promtool and the PromQL parser check
// about the rules themselves lives in tools/monitoring.

// TestPrometheusRuleFollowsTheRelease checks that every alert reads this
// release's series — stackdome's by the job and namespace the ServiceMonitor
// gives them, the Deployment's by its name — and takes its durations from
// the values.
func TestPrometheusRuleFollowsTheRelease(t *testing.T) {
	tests := map[string]struct {
		in                           install
		wantNamespace, wantSelector  string
		wantDeployment, wantDeployNS string
		wantFor                      map[string]string
		wantGroups                   []string
	}{
		"defaults": {
			in:            install{set: []string{"prometheusRule.enabled=true"}},
			wantNamespace: "stackdome", wantSelector: `job="stackdome",namespace="stackdome"`,
			wantDeployment: "stackdome", wantDeployNS: "stackdome",
			wantFor: map[string]string{
				"StackResourcePortNotListening": "5m", "StackResourceStalled": "10m", "StackResourceNotAvailable": "30m",
				"StackResourceErrorPagesNotWired": "15m", "StackResourceMiddlewareNotFound": "2m", "StackResourceChildNotCreated": "5m", "StackResourceRunFailed": "5m",
			},
			wantGroups: []string{"stackdome.stackresources", "stackdome"},
		},
		"other release, own durations and selector": {
			in: install{release: "edge", namespace: "platform", set: []string{
				"prometheusRule.enabled=true", "prometheusRule.namespace=monitoring",
				`prometheusRule.stackdomeSelector=service="edge-stackdome"`,
				"prometheusRule.portNotListeningFor=2m", "prometheusRule.stalledFor=1h", "prometheusRule.notAvailableFor=45m",
				"prometheusRule.errorPagesNotWiredFor=1h30m", "prometheusRule.middlewareNotFoundFor=10m", "prometheusRule.childNotCreatedFor=20m", "prometheusRule.runFailedFor=20m",
			}},
			wantNamespace: "monitoring", wantSelector: `service="edge-stackdome"`,
			wantDeployment: "edge-stackdome", wantDeployNS: "platform",
			wantFor: map[string]string{
				"StackResourcePortNotListening": "2m", "StackResourceStalled": "1h", "StackResourceNotAvailable": "45m",
				"StackResourceErrorPagesNotWired": "1h30m", "StackResourceMiddlewareNotFound": "10m", "StackResourceChildNotCreated": "20m", "StackResourceRunFailed": "20m",
			},
			wantGroups: []string{"stackdome.stackresources", "stackdome"},
		},
		"no StackResource alerts": {
			in:            install{set: []string{"prometheusRule.enabled=true", "prometheusRule.stackResourceAlerts=false"}},
			wantNamespace: "stackdome", wantSelector: `job="stackdome",namespace="stackdome"`,
			wantDeployment: "stackdome", wantDeployNS: "stackdome",
			wantGroups: []string{"stackdome"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			pr := find[*prometheusRule](t, decode(t, render(t, tc.in)), "PrometheusRule")
			if pr.Metadata.Namespace != tc.wantNamespace {
				t.Errorf("PrometheusRule in namespace %q, want %q", pr.Metadata.Namespace, tc.wantNamespace)
			}
			var groups []string
			for _, g := range pr.Spec.Groups {
				groups = append(groups, g.Name)
				for _, r := range g.Rules {
					switch {
					case strings.HasPrefix(r.Alert, "StackResource"):
						if got := r.For; got != tc.wantFor[r.Alert] {
							t.Errorf("%s: for %q, want %q", r.Alert, got, tc.wantFor[r.Alert])
						}
					case r.Alert == "StackdomeNoReadyEndpoint":
						want := `kube_deployment_status_replicas_available{namespace="` + tc.wantDeployNS + `",deployment="` + tc.wantDeployment + `"}`
						if !strings.Contains(r.Expr, want) {
							t.Errorf("%s: expr %q does not read %s", r.Alert, r.Expr, want)
						}
					default:
						for _, sel := range regexp.MustCompile(`stackdome_\w+\{[^}]*\}`).FindAllString(r.Expr, -1) {
							if !strings.Contains(sel, "{"+tc.wantSelector) {
								t.Errorf("%s: selector %s lacks %s", r.Alert, sel, tc.wantSelector)
							}
						}
					}
					if r.Labels["severity"] != "critical" && r.Labels["severity"] != "warning" {
						t.Errorf("%s: severity %q", r.Alert, r.Labels["severity"])
					}
				}
			}
			if diff := cmp.Diff(tc.wantGroups, groups); diff != "" {
				t.Errorf("rule groups (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEveryAlertHasARunbook: each alert's runbook_url points at a heading of
// docs/operations.md, and every alert that page lists exists in the chart.
func TestEveryAlertHasARunbook(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]string{} // GitHub's anchor → heading
	for _, m := range regexp.MustCompile(`(?m)^#{2,4} +(.+)$`).FindAllStringSubmatch(string(doc), -1) {
		anchors[githubAnchor(m[1])] = m[1]
	}
	pr := find[*prometheusRule](t, decode(t, render(t, install{set: []string{"prometheusRule.enabled=true"}})), "PrometheusRule")
	var alerts []string
	for _, g := range pr.Spec.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			url := r.Annotations["runbook_url"]
			base, anchor, _ := strings.Cut(url, "#")
			if base != "https://github.com/stackdome/stackdome/blob/main/docs/operations.md" {
				t.Errorf("%s: runbook_url %q is not docs/operations.md", r.Alert, url)
			}
			if anchors[anchor] != r.Alert {
				t.Errorf("%s: runbook_url anchor %q is no heading %q of docs/operations.md", r.Alert, anchor, r.Alert)
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("%s: summary and description are required", r.Alert)
			}
		}
	}
	for _, heading := range anchors {
		if (strings.HasPrefix(heading, "Stackdome") || strings.HasPrefix(heading, "StackResource")) && !slices.Contains(alerts, heading) {
			t.Errorf("docs/operations.md has a runbook for %s, which the chart does not render", heading)
		}
	}
}

// githubAnchor is the fragment GitHub gives a Markdown heading.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestHookLatencyThreshold(t *testing.T) {
	tests := map[string]struct {
		timeout, want, wantErr string
	}{
		"default 5s: the timeout itself":   {timeout: "5s", want: ">= 5\n"},
		"between the largest buckets":      {timeout: "7s", want: ">= 5\n"},
		"beyond every bucket":              {timeout: "1m30s", want: ">= 10\n"},
		"exactly a bucket":                 {timeout: "1s", want: ">= 1\n"},
		"between buckets":                  {timeout: "700ms", want: ">= 0.5\n"},
		"fractional seconds":               {timeout: "0.3s", want: ">= 0.25\n"},
		"microseconds":                     {timeout: "2500us", want: ">= 0.0025\n"},
		"below the smallest bucket":        {timeout: "300us", wantErr: "below the smallest hook latency bucket"},
		"minutes and seconds add":          {timeout: "1m0.5s", want: ">= 10\n"},
		"milliseconds are not minutes (m)": {timeout: "2ms", want: ">= 0.001\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, err := runHelm(t, install{set: []string{
				"prometheusRule.enabled=true", "compositeController.hookTimeout=" + tc.timeout,
			}}.args("template", "--show-only", "templates/prometheusrule.yaml")...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			pr := find[*prometheusRule](t, decode(t, out), "PrometheusRule")
			for _, g := range pr.Spec.Groups {
				for _, r := range g.Rules {
					if r.Alert == "StackdomeHookLatencyHigh" {
						if !strings.Contains(r.Expr+"\n", tc.want) {
							t.Errorf("expr %q, want the threshold %q", r.Expr, tc.want)
						}
						return
					}
				}
			}
			t.Fatal("no StackdomeHookLatencyHigh")
		})
	}
}

// TestMonitoringConfigMaps checks the kube-state-metrics config and the
// dashboard reach their consumers unchanged: the file bytes under the key
// and label each consumer reads.
func TestMonitoringConfigMaps(t *testing.T) {
	ksmConfig, err := os.ReadFile(filepath.Join("files", "kube-state-metrics-config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dashboard, err := os.ReadFile(filepath.Join("files", "grafana-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(dashboard) {
		t.Fatal("files/grafana-dashboard.json is not JSON")
	}
	objs := decode(t, render(t, renderCases["monitoring"]))
	for _, o := range objs {
		cm, ok := o.typed.(*corev1.ConfigMap)
		if !ok {
			continue
		}
		switch cm.Name {
		case "stackdome-kube-state-metrics":
			// kube-state-metrics' chart mounts the ConfigMap and reads config.yaml.
			if got := cm.Data["config.yaml"]; got != string(ksmConfig) {
				t.Errorf("config.yaml differs from files/kube-state-metrics-config.yaml:\n%s", cmp.Diff(string(ksmConfig), got))
			}
		case "stackdome-dashboard":
			if cm.Labels["grafana_dashboard"] != "1" {
				t.Errorf("dashboard labels %v lack the sidecar's grafana_dashboard: \"1\"", cm.Labels)
			}
			if cm.Annotations["grafana_folder"] != "Platform" {
				t.Errorf("dashboard annotations %v lack grafana_folder", cm.Annotations)
			}
			if got := cm.Data["stackdome.json"]; !bytes.Equal([]byte(got), dashboard) {
				t.Errorf("stackdome.json differs from files/grafana-dashboard.json")
			}
		default:
			t.Errorf("unexpected ConfigMap %s", cm.Name)
		}
	}
	for _, name := range []string{"stackdome-kube-state-metrics", "stackdome-dashboard"} {
		findNamed[*corev1.ConfigMap](t, objs, "ConfigMap", name)
	}
}
