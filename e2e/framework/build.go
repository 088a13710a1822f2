//go:build e2e

package framework

import (
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

// buildProducts are the binaries each e2e/<dir>/build.sh builds, in its
// order: what "N of M" counts while one is built.
var buildProducts = map[string][]string{
	"tools":          {"etcd", "kube-apiserver", "kube-controller-manager"},
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
	cmd := exec.Command("bash", filepath.Join(root, "e2e", dir, "build.sh"))
	cmd.Dir = filepath.Join(root, "e2e", dir)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	progress := NewProgress("e2e/"+dir, ProgressEvery, func(l string) { fmt.Fprintln(os.Stderr, l) })
	defer progress.Stop()
	cmd.Stderr = &buildWatch{out: func(b []byte) { os.Stderr.Write(b) }, progress: progress, products: buildProducts[dir]}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building %s (e2e/%s/build.sh): %w", what, dir, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}
