//go:build e2e

package framework

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// BuildControlPlane runs e2e/tools/build.sh, which builds only what its cache
// lacks, and returns the directory holding the binaries.
func BuildControlPlane(root string) (string, error) {
	if dir := os.Getenv("STACKDOME_E2E_BIN"); dir != "" {
		return dir, nil
	}
	return runBuildScript(root, "tools", "the control plane")
}

// KubectlBinary runs e2e/kubectl/build.sh (STACKDOME_E2E_KUBECTL: a
// directory holding kubectl, skip the build) and returns kubectl's path.
func KubectlBinary(root string) (string, error) {
	dir := os.Getenv("STACKDOME_E2E_KUBECTL")
	if dir == "" {
		var err error
		if dir, err = runBuildScript(root, "kubectl", "kubectl"); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, "kubectl"), nil
}

// NodeBinaries runs `e2e/tools/build.sh node`, which builds what its cache
// lacks of the real node's binaries — kubelet, kube-proxy, kube-scheduler,
// coredns and kube-router — into the directory beside the control plane's,
// and returns that directory (STACKDOME_E2E_NODE_BIN: a directory holding
// all five, skip the build).
func NodeBinaries(ctx context.Context) (string, error) {
	if dir := os.Getenv("STACKDOME_E2E_NODE_BIN"); dir != "" {
		return dir, nil
	}
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	return runBuildScriptArgs(ctx, root, "tools", "the node's binaries", "node")
}

// repoRoot is the repository root: the directory above e2e/ that holds this
// test binary's package (go test runs it in the package's directory).
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "e2e", "tools", "build.sh")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no e2e/tools/build.sh above %s", dir)
		}
	}
}

// buildProducts are the binaries each e2e/<dir>/build.sh builds, in its
// order: what "N of M" counts while one is built.
var buildProducts = map[string][]string{
	"tools":          {"etcd", "kube-apiserver", "kube-controller-manager"},
	"tools node":     {"kube-scheduler", "kubelet", "kube-proxy", "coredns", "kube-router"},
	"kubectl":        {"kubectl"},
	"traefik":        {"traefik"},
	"metacontroller": {"metacontroller"},
}

// runBuildScript runs e2e/<dir>/build.sh, which prints the directory of what
// it built (or found cached) on its last line, and returns that directory.
// Its progress goes to stderr, and while it builds a binary, every
// ProgressEvery, which one and for how long (a go build of kube-apiserver
// takes minutes without a word); it dies with the test binary.
func runBuildScript(root, dir, what string) (string, error) {
	return runBuildScriptArgs(context.Background(), root, dir, what)
}

// runBuildScriptArgs is runBuildScript with arguments for build.sh, ended
// with ctx.
func runBuildScriptArgs(ctx context.Context, root, dir, what string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(root, "e2e", dir, "build.sh")}, args...)...)
	cmd.Dir = filepath.Join(root, "e2e", dir)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	progress := NewProgress("e2e/"+dir, ProgressEvery, func(l string) { fmt.Fprintln(os.Stderr, l) })
	defer progress.Stop()
	cmd.Stderr = &buildWatch{out: func(b []byte) { os.Stderr.Write(b) }, progress: progress, products: buildProducts[strings.Join(append([]string{dir}, args...), " ")]}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building %s (e2e/%s/build.sh): %w", what, dir, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}
