//go:build e2e

// Package e2e proves against a real kube-apiserver what the fixture tests can
// only assert: that every child and every status stackdome returns is
// accepted and stored exactly as sent (otherwise Metacontroller updates it on
// every sync), that the CRD rejects invalid specs at admission, that the
// chart installs, and that a live sync names exactly the dead ports.
//
// TestMain builds (or reuses) etcd, kube-apiserver and kube-controller-manager
// from e2e/tools, starts them once on loopback for the whole package, and
// stops them whatever happens. Run it with `make e2e`.
package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// suite is what TestMain sets up for every test of the package.
var suite struct {
	root    string // repository root
	shared  string // <root>/../shared (STACKDOME_SHARED overrides); may not exist
	mcCRDs  metacontrollerCRDs
	binDir  string // cached control-plane binaries
	mcDir   string // cached Metacontroller build: the binary and src/
	kubectl string // the kubectl binary
	mc      *realMetacontroller
	tmp     string // per-run scratch, removed at exit
	cluster *cluster
	// host is the test host in a network namespace (testhost_test.go), or
	// nil with hostErr saying why it could not be made: the tests that need
	// it fail with that error, the others run.
	host    *testHost
	hostErr error
}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) (code int) {
	var cl cleanups
	defer cl.run()

	// An interrupt or a CI cancellation still stops the control plane and
	// removes the scratch directory; Pdeathsig covers a crash.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "e2e: %v: stopping the control plane\n", s)
		cl.run()
		os.Exit(2)
	}()

	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 1
	}

	root, err := filepath.Abs("..")
	if err != nil {
		return fail(err)
	}
	suite.root = root
	suite.shared = sharedDir(root)
	// The real Metacontroller or nothing: without its pinned source the
	// suite stops here, with one line saying what to set.
	if _, err := metacontrollerSourcePath(suite.shared); err != nil {
		return fail(err)
	}

	start := time.Now()
	suite.binDir, err = buildControlPlane(root)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "e2e: control-plane binaries ready in %s (%s)\n", time.Since(start).Round(time.Second), suite.binDir)

	start = time.Now()
	if traefikBuild.dir, traefikBuild.err = buildTraefik(root); traefikBuild.err == nil {
		fmt.Fprintf(os.Stderr, "e2e: Traefik binary ready in %s (%s)\n", time.Since(start).Round(time.Second), traefikBuild.dir)
	} else {
		fmt.Fprintf(os.Stderr, "e2e: no Traefik, the tests that need it will fail: %v\n", traefikBuild.err)
	}

	start = time.Now()
	if suite.mcDir, err = buildMetacontroller(root, suite.shared); err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "e2e: Metacontroller binary ready in %s (%s)\n", time.Since(start).Round(time.Second), suite.mcDir)
	suite.mcCRDs = metacontrollerCRDs{path: filepath.Join(suite.mcDir, "src", "manifests", "production", "metacontroller-crds-v1.yaml"), real: true}
	start = time.Now()
	if suite.kubectl, err = kubectlBinary(root); err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "e2e: kubectl ready in %s (%s)\n", time.Since(start).Round(time.Second), suite.kubectl)

	removeStaleScratch()
	suite.tmp, err = os.MkdirTemp("", "stackdome-e2e-")
	if err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(suite.tmp, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return fail(err)
	}
	keep := os.Getenv("STACKDOME_E2E_KEEP") != ""
	cl.add(func() {
		if keep {
			fmt.Fprintf(os.Stderr, "e2e: kept %s\n", suite.tmp)
			return
		}
		os.RemoveAll(suite.tmp)
	})

	// The test host comes first: the cluster's Service range is a part of
	// its /24, so a ClusterIP can be made to answer there.
	serviceRange := "10.0.0.0/24" // nothing on this machine has it; never dialed
	if suite.host, suite.hostErr = newTestHost(); suite.hostErr == nil {
		cl.add(suite.host.close)
		serviceRange = suite.host.serviceRange().String()
		fmt.Fprintf(os.Stderr, "e2e: test host %s in a network namespace (root side %s), Service range %s\n", suite.host.guestIP, suite.host.hostIP, serviceRange)
	} else {
		fmt.Fprintf(os.Stderr, "e2e: no test host, the tests that need one will fail: %v\n", suite.hostErr)
	}

	if r := fleetServiceRange(); r != "" {
		serviceRange = r // TestFleet's N Services (fleet_test.go)
	}
	ctx := context.Background()
	start = time.Now()
	c, err := startCluster(ctx, suite.binDir, filepath.Join(suite.tmp, "cluster"), serviceRange)
	if err != nil {
		return fail(fmt.Errorf("starting control plane: %w", err))
	}
	cl.add(c.stop)
	suite.cluster = c
	fmt.Fprintf(os.Stderr, "e2e: control plane %s up in %s at %s\n", clusterVersion, time.Since(start).Round(100*time.Millisecond), c.kube.base)

	// Traefik's CRDs before Metacontroller, so its first discovery sees every
	// kind the chart's CompositeController names.
	start = time.Now()
	if err := installPrerequisiteCRDs(ctx, c.kube); err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "e2e: Traefik CRDs Established in %s\n", time.Since(start).Round(100*time.Millisecond))

	if suite.host == nil {
		return fail(fmt.Errorf("the real Metacontroller's pod needs the test host's privileges: %w", suite.hostErr))
	}
	start = time.Now()
	mc, err := startRealMetacontroller(ctx, c, suite.kubectl, suite.mcDir, filepath.Join(suite.tmp, "metacontroller"))
	if err != nil {
		return fail(fmt.Errorf("starting Metacontroller: %w", err))
	}
	cl.add(mc.stop)
	suite.mc = mc
	fmt.Fprintf(os.Stderr, "e2e: %s, ready in %s\n", mc, time.Since(start).Round(100*time.Millisecond))

	code = m.Run()
	if code != 0 {
		for _, p := range c.procs {
			fmt.Fprintf(os.Stderr, "e2e: last lines of %s:\n%s\n", p.name, indent(p.tail(15)))
		}
		fmt.Fprintf(os.Stderr, "e2e: last lines of metacontroller:\n%s\n", indent(mc.proc.tail(30)))
	}
	return code
}

// removeStaleScratch removes scratch directories of earlier runs whose test
// binary is gone: a panic in a test exits without running TestMain's
// cleanups (the processes die with it through Pdeathsig; their files stay).
func removeStaleScratch() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "stackdome-e2e-*"))
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, "pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(dir)
		}
	}
}

// buildControlPlane runs e2e/tools/build.sh, which builds only what its cache
// lacks, and returns the directory holding the binaries.
func buildControlPlane(root string) (string, error) {
	if dir := os.Getenv("STACKDOME_E2E_BIN"); dir != "" {
		return dir, nil
	}
	return runBuildScript(root, "tools", "the control plane")
}

// kubectlBinary runs e2e/kubectl/build.sh (STACKDOME_E2E_KUBECTL: a
// directory holding kubectl, skip the build) and returns kubectl's path.
func kubectlBinary(root string) (string, error) {
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
