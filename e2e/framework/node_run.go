//go:build e2e

package framework

// The command-line tools of the real-node suite, run against its cluster.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Helm runs bin/helm (`make tools`) against the suite's cluster, its state
// under the run's scratch directory, for at most five minutes; it returns
// helm's combined output.
func (s *Suite) Helm(ctx context.Context, args ...string) ([]byte, error) {
	bin := filepath.Join(s.Root, "bin", "helm")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("no bin/helm (make tools): %w", err)
	}
	home := filepath.Join(s.Scratch, "helm")
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(args, "--kubeconfig", s.Cluster.Kubeconfig)...)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
		"KUBECONFIG="+s.Cluster.Kubeconfig,
	)
	return cmd.CombinedOutput()
}

// KubectlRun runs the suite's kubectl (e2e/kubectl/build.sh) against its
// cluster, for at most two minutes; it returns kubectl's combined output.
func (s *Suite) KubectlRun(ctx context.Context, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Kubectl, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+s.Cluster.Kubeconfig)
	return cmd.CombinedOutput()
}

// MetacontrollerManifests is the production kustomization of the pinned
// Metacontroller source, as docs/install.md applies it: the tree
// e2e/metacontroller/build.sh extracts (a cached build returns at once).
func (s *Suite) MetacontrollerManifests() (string, error) {
	dir, err := BuildMetacontroller(s.Root, s.Shared)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "src", "manifests", "production"), nil
}
