package monitoring

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The rules the chart renders go through the real promtool (Prometheus
// v3.16.0, this module's pin), as a Prometheus Operator hands them to
// Prometheus: the PrometheusRule's spec is a rule file.

// valueCombinations are the values under which the rules must stay valid.
var valueCombinations = map[string][]string{
	"defaults":                {},
	"other release":           {"fullnameOverride=edge-stackdome"},
	"own selector, durations": {`prometheusRule.stackdomeSelector=service="stackdome"\,container="stackdome"`, "prometheusRule.stalledFor=1h", "prometheusRule.portNotListeningFor=90s"},
	"no StackResource alerts": {"prometheusRule.stackResourceAlerts=false"},
	"error pages off":         {"errorPages.enabled=false"},
	"short hook timeout":      {"compositeController.hookTimeout=700ms"},
}

// TestRulesPassPromtoolCheck runs `promtool check rules` on every values
// combination's rules; it fails on a rule Prometheus would refuse to load.
func TestRulesPassPromtoolCheck(t *testing.T) {
	promtool := tool(t, "promtool")
	for name, set := range valueCombinations {
		t.Run(name, func(t *testing.T) {
			_, rules := renderRules(t, set...)
			file := filepath.Join(t.TempDir(), "rules.yaml")
			if err := os.WriteFile(file, rules, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(promtool, "check", "rules", "--lint=all", "--lint-fatal", file).CombinedOutput()
			if err != nil {
				t.Fatalf("promtool check rules: %v\n%s\n%s", err, out, rules)
			}
			if !strings.Contains(string(out), "SUCCESS") {
				t.Fatalf("promtool check rules did not succeed:\n%s", out)
			}
		})
	}
}

// TestAlertUnitTests runs testdata/alerts.test.yaml — series under which each
// alert must fire, and series under which it must not — against the rules
// the default values render.
func TestAlertUnitTests(t *testing.T) {
	promtool := tool(t, "promtool")
	_, rules := renderRules(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "stackdome-rules.yaml"), rules, 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join("testdata", "alerts.test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts.test.yaml"), tests, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "test", "rules", "alerts.test.yaml")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestEveryAlertIsUnitTested: each alert the chart renders is the subject
// of a group in testdata/alerts.test.yaml that expects it to fire, and of an
// evaluation that expects it not to.
func TestEveryAlertIsUnitTested(t *testing.T) {
	groups, _ := renderRules(t)
	tests, err := os.ReadFile(filepath.Join("testdata", "alerts.test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fires, silent := alertTestCoverage(t, tests)
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			if !fires[r.Alert] {
				t.Errorf("%s: no test expects it to fire", r.Alert)
			}
			if !silent[r.Alert] {
				t.Errorf("%s: no test expects it to stay silent", r.Alert)
			}
		}
	}
}

// alertTestCoverage reads a promtool test file and returns which alerts some
// evaluation expects firing, and which some evaluation expects silent.
func alertTestCoverage(t *testing.T, file []byte) (fires, silent map[string]bool) {
	t.Helper()
	var f struct {
		Tests []struct {
			AlertRuleTest []struct {
				Alertname string `json:"alertname"`
				ExpAlerts []any  `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(file, &f); err != nil {
		t.Fatal(err)
	}
	fires, silent = map[string]bool{}, map[string]bool{}
	for _, tc := range f.Tests {
		for _, a := range tc.AlertRuleTest {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				silent[a.Alertname] = true
			}
		}
	}
	return fires, silent
}

// TestParserIsPromtools: the PromQL parser these tests use is the Prometheus
// promtool is built from, so both read the rules the same way.
func TestParserIsPromtools(t *testing.T) {
	version := func(gomod string) string {
		t.Helper()
		b, err := os.ReadFile(gomod)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			for i := range f {
				if f[i] == "github.com/prometheus/prometheus" && i+1 < len(f) {
					return f[i+1]
				}
			}
		}
		t.Fatalf("%s does not require github.com/prometheus/prometheus", gomod)
		return ""
	}
	pinned, ours := version(filepath.Join("..", "promtool", "go.mod")), version("go.mod")
	if pinned != ours {
		t.Errorf("tools/promtool pins Prometheus %s, the parser here is %s", pinned, ours)
	}
}
