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

// runBuildScript runs e2e/<dir>/build.sh, which prints the directory of what
// it built (or found cached) on its last line, and returns that directory.
// Its progress goes to stderr; it dies with the test binary.
func runBuildScript(root, dir, what string) (string, error) {
	cmd := exec.Command("bash", filepath.Join(root, "e2e", dir, "build.sh"))
	cmd.Dir = filepath.Join(root, "e2e", dir)
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("building %s (e2e/%s/build.sh): %w", what, dir, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1], nil
}
