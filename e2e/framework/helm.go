//go:build e2e

package framework

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The helm runner: bin/helm (built by `make tools`) against a control plane,
// its config, cache and data kept in the run's scratch directory, and what
// it renders.

// InstallRelease installs chart as release in the fixture's namespace with
// the values set, and uninstalls it when the test ends; a failure of either
// fails the test. It waits
// for no pod: with no kubelet the chart's pods stay Pending (e2e/node runs
// them).
func (f *Fixture) InstallRelease(release, chart string, set ...string) {
	t, ns := f.t, f.Namespace
	t.Helper()
	args := []string{"install", release, chart, "--namespace", ns, "--timeout", "2m"}
	for _, v := range set {
		args = append(args, "--set", v)
	}
	if out, err := f.Helm(t.Context(), args...); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if out, err := f.Helm(ctx, "uninstall", release, "--namespace", ns); err != nil {
			t.Errorf("helm uninstall: %v\n%s", err, out)
		}
	})
}

// Helm runs bin/helm (built by `make tools`) with args against the
// fixture's cluster (HelmOn) and returns its combined output.
func (f *Fixture) Helm(ctx context.Context, args ...string) ([]byte, error) {
	return f.HelmOn(ctx, f.Cluster.Kubeconfig, args...)
}

// HelmOn runs bin/helm with args against the cluster of kubeconfig, with
// its config, cache and data kept in the suite's scratch directory, and
// returns its combined output; it gives up after three minutes.
func (s *Suite) HelmOn(ctx context.Context, kubeconfig string, args ...string) ([]byte, error) {
	bin := filepath.Join(s.Root, "bin", "helm")
	if _, err := os.Stat(bin); err != nil {
		return nil, err
	}
	home := filepath.Join(s.Scratch, "helm")
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(args, "--kubeconfig", kubeconfig)...)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
		"KUBECONFIG="+kubeconfig,
	)
	return cmd.CombinedOutput()
}

// Header is what ManifestHeader reads of a manifest.
type Header struct{ APIVersion, Kind, Name, Namespace string }

// ManifestHeader reads apiVersion, kind, metadata.name and metadata.namespace
// from a rendered manifest: top-level scalars and the two-space-indented keys
// under metadata, which is how helm and toYaml print them.
func ManifestHeader(doc []byte) Header {
	var h Header
	inMeta := false
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "#") || strings.TrimSpace(line) == "" {
			continue
		}
		if !strings.HasPrefix(line, " ") {
			inMeta = strings.TrimSpace(line) == "metadata:"
			key, val, _ := strings.Cut(line, ":")
			val = unquote(val)
			switch key {
			case "apiVersion":
				h.APIVersion = val
			case "kind":
				h.Kind = val
			}
			continue
		}
		if inMeta && strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") {
			key, val, _ := strings.Cut(strings.TrimSpace(line), ":")
			switch key {
			case "name":
				h.Name = unquote(val)
			case "namespace":
				h.Namespace = unquote(val)
			}
		}
	}
	return h
}

// unquote is a YAML scalar without its quotes.
func unquote(s string) string {
	return strings.Trim(strings.TrimSpace(s), `"'`)
}
