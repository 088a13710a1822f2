package monitoring

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// repoRoot is the stackdome checkout: go test runs in tools/monitoring.
const repoRoot = "../.."

// tool returns <repo>/bin/<name>, which `make tools` (helm) and `make
// promtool` provide. Without it nothing here can be checked: under CI that
// is a failure, locally a skip.
func tool(t *testing.T, name string) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join(repoRoot, "bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		msg := fmt.Sprintf("%s not found (run `make tools promtool`): %v", bin, err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return bin
}

// render runs `helm template` on the chart with --set values and returns the
// rendered documents, each as YAML.
func render(t *testing.T, set ...string) [][]byte {
	t.Helper()
	// --kube-version: without it Helm renders for v1.20.0, below the chart's
	// kubeVersion (the e2e control plane's, as Argo CD passes the cluster's).
	// --api-versions: the prerequisites a cluster running stackdome serves.
	args := []string{"template", "stackdome", filepath.Join(repoRoot, "chart"), "--namespace", "stackdome", "--kube-version", "v1.37.2",
		"--api-versions", "metacontroller.k8s.io/v1alpha1/CompositeController",
		"--api-versions", "traefik.io/v1alpha1/IngressRoute", "--api-versions", "traefik.io/v1alpha1/Middleware",
		"--set", "podCIDRs={10.244.0.0/16}"} // the chart has no default
	for _, s := range set {
		args = append(args, "--set", s)
	}
	cmd := exec.Command(tool(t, "helm"), args...)
	home := t.TempDir()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home,
		"KUBECONFIG="+filepath.Join(home, "no-kubeconfig"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var docs [][]byte
	for _, d := range bytes.Split(stdout.Bytes(), []byte("\n---\n")) {
		if len(bytes.TrimSpace(d)) > 0 {
			docs = append(docs, d)
		}
	}
	return docs
}

// object decodes the rendered object of kind and name (any name when empty)
// into v.
func object(t *testing.T, docs [][]byte, kind, name string, v any) {
	t.Helper()
	for _, d := range docs {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(d, &head); err != nil {
			t.Fatalf("%v\n%s", err, d)
		}
		if head.Kind == kind && (name == "" || head.Metadata.Name == name) {
			if err := yaml.UnmarshalStrict(d, v); err != nil {
				t.Fatalf("%s %s: %v", kind, name, err)
			}
			return
		}
	}
	t.Fatalf("no %s %s rendered", kind, name)
}

// ruleGroups is the spec of the chart's PrometheusRule: exactly a Prometheus
// rule file's content.
type ruleGroups struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert       string            `json:"alert"`
			Expr        string            `json:"expr"`
			For         string            `json:"for"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

// renderRules renders the PrometheusRule with the --set values on top of
// prometheusRule.enabled=true and returns its groups and their YAML.
func renderRules(t *testing.T, set ...string) (ruleGroups, []byte) {
	t.Helper()
	var pr struct {
		APIVersion string         `json:"apiVersion"`
		Kind       string         `json:"kind"`
		Metadata   map[string]any `json:"metadata"`
		Spec       ruleGroups     `json:"spec"`
	}
	object(t, render(t, append([]string{"prometheusRule.enabled=true"}, set...)...), "PrometheusRule", "", &pr)
	out, err := yaml.Marshal(pr.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return pr.Spec, out
}

// kubeStateMetricsConfig is the rendered ConfigMap's config.yaml.
func kubeStateMetricsConfig(t *testing.T) []byte {
	t.Helper()
	var cm struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   map[string]any    `json:"metadata"`
		Data       map[string]string `json:"data"`
	}
	object(t, render(t, "kubeStateMetrics.enabled=true"), "ConfigMap", "stackdome-kube-state-metrics", &cm)
	return []byte(cm.Data["config.yaml"])
}

// dashboardJSON is the rendered ConfigMap's dashboard.
func dashboardJSON(t *testing.T) []byte {
	t.Helper()
	var cm struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   map[string]any    `json:"metadata"`
		Data       map[string]string `json:"data"`
	}
	object(t, render(t, "grafanaDashboard.enabled=true"), "ConfigMap", "stackdome-dashboard", &cm)
	return []byte(cm.Data["stackdome.json"])
}
