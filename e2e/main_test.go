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
	mcDir   string // cached Metacontroller build: the binary and src/
	kubectl string // the kubectl binary
	mc      *framework.Metacontroller
	kubelet *framework.Kubelet
	// traefik is the directory of the Traefik binary, or traefikErr why
	// there is none: the tests that need it fail with that error.
	traefik    string
	traefikErr error
	// traefikChart installs the pinned Traefik chart, its pod run by the
	// kubelet on the test host (nil with traefikErr saying why).
	traefikChart *framework.TraefikChart
	tmp          string // per-run scratch, removed at exit
	cluster      *framework.Cluster
	// host is the test host in a network namespace (testhost_test.go), or
	// nil with hostErr saying why it could not be made: the tests that need
	// it fail with that error, the others run.
	host    *framework.TestHost
	hostErr error
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

	start = time.Now()
	if suite.traefik, suite.traefikErr = framework.BuildTraefik(root); suite.traefikErr == nil {
		fmt.Fprintf(os.Stderr, "e2e: Traefik binary ready in %s (%s)\n", time.Since(start).Round(time.Second), suite.traefik)
	} else {
		fmt.Fprintf(os.Stderr, "e2e: no Traefik, the tests that need it will fail: %v\n", suite.traefikErr)
	}

	start = time.Now()
	if suite.mcDir, err = framework.BuildMetacontroller(root, suite.shared); err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "e2e: Metacontroller binary ready in %s (%s)\n", time.Since(start).Round(time.Second), suite.mcDir)
	suite.mcCRDs = metacontrollerCRDs{path: filepath.Join(suite.mcDir, "src", "manifests", "production", "metacontroller-crds-v1.yaml"), real: true}
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

	// The test host comes first: the cluster's Service range is a part of
	// its /24, so a ClusterIP can be made to answer there.
	serviceRange := "10.0.0.0/24" // nothing on this machine has it; never dialed
	if suite.host, suite.hostErr = framework.NewTestHost(); suite.hostErr == nil {
		cl.Add(suite.host.Close)
		serviceRange = suite.host.ServiceRange().String()
		fmt.Fprintf(os.Stderr, "e2e: test host %s in a network namespace (root side %s), Service range %s\n", suite.host.GuestIP, suite.host.HostIP, serviceRange)
	} else {
		fmt.Fprintf(os.Stderr, "e2e: no test host, the tests that need one will fail: %v\n", suite.hostErr)
	}

	ctx := context.Background()
	start = time.Now()
	c, err := framework.StartCluster(ctx, suite.binDir, filepath.Join(suite.tmp, "cluster"), serviceRange)
	if err != nil {
		return fail(fmt.Errorf("starting control plane: %w", err))
	}
	cl.Add(c.Stop)
	suite.cluster = c
	suite.kubelet = framework.NewKubelet(c.Kube)
	fmt.Fprintf(os.Stderr, "e2e: control plane %s up in %s at %s\n", framework.ClusterVersion, time.Since(start).Round(100*time.Millisecond), c.Kube.Base)

	// Traefik's CRDs before Metacontroller, so its first discovery sees every
	// kind the chart's CompositeController names.
	start = time.Now()
	if err := installPrerequisiteCRDs(ctx, c.Kube); err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "e2e: Traefik CRDs Established in %s\n", time.Since(start).Round(100*time.Millisecond))

	if suite.host == nil {
		return fail(fmt.Errorf("the real Metacontroller's pod needs the test host's privileges: %w", suite.hostErr))
	}
	start = time.Now()
	mc, err := framework.StartMetacontroller(ctx, c, suite.kubelet, suite.kubectl, suite.mcDir, filepath.Join(suite.tmp, "metacontroller"))
	if err != nil {
		return fail(fmt.Errorf("starting Metacontroller: %w", err))
	}
	cl.Add(mc.Stop)
	suite.mc = mc
	fmt.Fprintf(os.Stderr, "e2e: %s, ready in %s\n", mc, time.Since(start).Round(100*time.Millisecond))

	// Pods on the test host (Traefik's chart, install.md's) reach the API
	// server at the kubernetes Service's ClusterIP, as in a cluster.
	stopAPI, err := suite.kubelet.UseHost(ctx, suite.host)
	if err != nil {
		return fail(fmt.Errorf("the kubernetes Service on the test host: %w", err))
	}
	cl.Add(stopAPI)
	if suite.traefikErr == nil {
		chart, err := framework.TraefikChartPath(suite.shared, filepath.Join(suite.tmp, "traefik-chart"))
		if err != nil {
			suite.traefikErr = err
			fmt.Fprintf(os.Stderr, "e2e: no Traefik chart, the tests that need it will fail: %v\n", err)
		} else {
			suite.traefikChart = &framework.TraefikChart{Helm: helm, Chart: chart, Binary: suite.traefik, Kubelet: suite.kubelet, Host: suite.host}
		}
	}

	code = m.Run()
	if code != 0 {
		for _, p := range c.Procs {
			fmt.Fprintf(os.Stderr, "e2e: last lines of %s:\n%s\n", p.Name, framework.Indent(p.Tail(15)))
		}
		fmt.Fprintf(os.Stderr, "e2e: last lines of metacontroller:\n%s\n", framework.Indent(mc.Proc.Tail(30)))
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

// requireHost is the suite's test host; without one (no root, no ip or
// nsenter) it fails t, saying why: a test that needs the host never skips.
func requireHost(t *testing.T) *framework.TestHost {
	t.Helper()
	if suite.hostErr != nil {
		t.Fatalf("no test host: %v", suite.hostErr)
	}
	return suite.host
}

// obj is a JSON object as the API client decodes it.
type obj = framework.Obj
