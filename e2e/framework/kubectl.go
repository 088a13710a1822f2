//go:build e2e

package framework

// The kubectl runner: the suite's kubectl binary (KubectlBinary) against the
// package's control plane, as a user runs it.

import (
	"context"
	"os"
	"os/exec"
)

// KubectlIn runs the suite's kubectl with args in dir against the fixture's
// cluster, as a user would on their own machine: KUBECONFIG is the
// cluster's, no variable of the caller's environment points it at another
// (WithoutClusterEnv), and HOME is a fresh directory of the test's, so no
// cache or config of the machine's is read. It returns kubectl's combined
// output and its error.
func (f *Fixture) KubectlIn(ctx context.Context, dir string, args ...string) (string, error) {
	c := exec.CommandContext(ctx, f.Kubectl, args...)
	c.Dir = dir
	c.Env = append(WithoutClusterEnv(os.Environ()), "KUBECONFIG="+f.Cluster.Kubeconfig, "HOME="+f.t.TempDir())
	out, err := c.CombinedOutput()
	return string(out), err
}
