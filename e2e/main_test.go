//go:build e2e

// Package e2e proves against a real kube-apiserver what the fixture tests can
// only assert: that every child and every status stackdome returns is
// accepted and stored exactly as sent (otherwise Metacontroller updates it on
// every sync), that the CRD rejects invalid specs at admission, and that the
// chart installs and refuses a cluster without its prerequisites. What runs
// pods (Metacontroller, Traefik, stackdome, apps) is e2e/node's.
//
// TestMain builds (or reuses) etcd, kube-apiserver and kube-controller-manager
// from e2e/tools, starts them once on loopback for the whole package with
// Traefik's and Metacontroller's CRDs, and stops them whatever happens. No
// kubelet, no Metacontroller process, no network namespace: the package
// needs no root. Run it with `make e2e`.
package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// suite is what TestMain sets up for every test of the package.
var suite struct {
	root    string // repository root
	shared  string // <root>/../shared (STACKDOME_SHARED overrides); may not exist
	mcCRDs  metacontrollerCRDs
	binDir  string // cached control-plane binaries
	kubectl string // the kubectl binary
	tmp     string // per-run scratch, removed at exit
	cluster *framework.Cluster
}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) (code int) {
	var cl framework.Cleanups
	defer cl.Run()

	// An interrupt or a CI cancellation still stops the control plane and
	// removes the scratch directory; Pdeathsig covers a crash.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "e2e: %v: stopping the control plane\n", s)
		cl.Run()
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
	if _, err := framework.MetacontrollerSourcePath(suite.shared); err != nil {
		return fail(err)
	}

	start := time.Now()
	suite.binDir, err = framework.BuildControlPlane(root)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "e2e: control-plane binaries ready in %s (%s)\n", time.Since(start).Round(time.Second), suite.binDir)

	// Only Metacontroller's CRDs, from the source tree its build extracts
	// (the same cache the node suite's image uses): no Metacontroller runs.
	start = time.Now()
	mcDir, err := framework.BuildMetacontroller(root, suite.shared)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "e2e: Metacontroller source ready in %s (%s)\n", time.Since(start).Round(time.Second), mcDir)
	suite.mcCRDs = metacontrollerCRDs{path: filepath.Join(mcDir, "src", "manifests", "production", "metacontroller-crds-v1.yaml"), real: true}
	start = time.Now()
	if suite.kubectl, err = framework.KubectlBinary(root); err != nil {
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
	cl.Add(func() {
		if keep {
			fmt.Fprintf(os.Stderr, "e2e: kept %s\n", suite.tmp)
			return
		}
		os.RemoveAll(suite.tmp)
	})

	ctx := context.Background()
	start = time.Now()
	// The Service range is never dialed: nothing runs pods.
	c, err := framework.StartCluster(ctx, suite.binDir, filepath.Join(suite.tmp, "cluster"), "10.0.0.0/24")
	if err != nil {
		return fail(fmt.Errorf("starting control plane: %w", err))
	}
	cl.Add(c.Stop)
	suite.cluster = c
	fmt.Fprintf(os.Stderr, "e2e: control plane %s up in %s at %s\n", framework.ClusterVersion, time.Since(start).Round(100*time.Millisecond), c.Kube.Base)

	// What a cluster running stackdome has before the chart: Traefik's
	// CRDs (from its pinned chart) and Metacontroller's.
	start = time.Now()
	if err := installPrerequisiteCRDs(ctx, c.Kube); err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "e2e: Traefik's and Metacontroller's CRDs Established in %s\n", time.Since(start).Round(100*time.Millisecond))

	code = m.Run()
	if code != 0 {
		for _, p := range c.Procs {
			fmt.Fprintf(os.Stderr, "e2e: last lines of %s:\n%s\n", p.Name, framework.Indent(p.Tail(15)))
		}
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

// obj is a JSON object as the API client decodes it.
type obj = framework.Obj
