//go:build e2e

package framework

// The per-test fixture of the ./e2e package, as Metacontroller's
// test/integration/framework.Fixture: TestMain starts one loopback control
// plane for the package; each test makes a Fixture from its t and gets that
// control plane, a namespace of its own deleted when the test ends, and the
// waits and runners below. What a package's TestMain started is the one
// package state here (suite), set once by TestMain (this one, or
// NodeTestMain for e2e/node) before any test runs and read only after.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Suite is what TestMain (or NodeTestMain) set up for every test of the
// package.
type Suite struct {
	Root               string             // repository root
	Shared             string             // <root>/../shared (STACKDOME_SHARED overrides); may not exist
	MetacontrollerCRDs MetacontrollerCRDs // the Metacontroller CRDs installed (TestMain only)
	BinDir             string             // cached control-plane binaries
	Kubectl            string             // the kubectl binary
	Scratch            string             // per-run scratch, removed at exit
	Cluster            *Cluster
	Node               *Node // the real node; NodeTestMain only

	platform platform // what the node's tests install once a run (node_platform.go)

	stackCRD struct { // RequireStackResourceCRD's installation, once a run
		once sync.Once
		err  error
	}
}

// suite is the control plane TestMain started; nil outside a package whose
// TestMain is framework.TestMain.
var suite *Suite

// TestMain builds (or reuses) etcd, kube-apiserver and
// kube-controller-manager from e2e/tools, starts them once on loopback for
// the whole package with Traefik's and Metacontroller's CRDs, runs the
// package's tests and stops them whatever happens (an interrupt too); it
// exits the process with the tests' code. The repository root is the parent
// of the working directory, which go test makes the package's (e2e/). No kubelet, no Metacontroller
// process, no network namespace: it needs no root. The package's own
// TestMain is a call of it; its tests reach the control plane through
// NewFixture.
func TestMain(m *testing.M) {
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) (code int) {
	var cl Cleanups
	defer cl.Run()

	runCleanupsOnSignal(&cl, "e2e", "the control plane")
	fail := failWith("e2e")

	s := &Suite{}
	root, err := filepath.Abs("..")
	if err != nil {
		return fail(err)
	}
	s.Root = root
	s.Shared = SharedDir(root)
	// The real Metacontroller or nothing: without its pinned source the
	// suite stops here, with one line saying what to set.
	if _, err := MetacontrollerSourcePath(s.Shared); err != nil {
		return fail(err)
	}

	start := time.Now()
	s.BinDir, err = BuildControlPlane(root)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "e2e: control-plane binaries ready in %s (%s)\n", time.Since(start).Round(time.Second), s.BinDir)

	// Only Metacontroller's CRDs, from the source tree its build extracts
	// (the same cache the node suite's image uses): no Metacontroller runs.
	start = time.Now()
	mcDir, err := BuildMetacontroller(root, s.Shared)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "e2e: Metacontroller source ready in %s (%s)\n", time.Since(start).Round(time.Second), mcDir)
	s.MetacontrollerCRDs = MetacontrollerCRDs{Path: filepath.Join(mcDir, "src", "manifests", "production", "metacontroller-crds-v1.yaml"), Real: true}
	start = time.Now()
	if s.Kubectl, err = KubectlBinary(root); err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "e2e: kubectl ready in %s (%s)\n", time.Since(start).Round(time.Second), s.Kubectl)

	removeStaleScratch("stackdome-e2e-*")
	s.Scratch, err = os.MkdirTemp("", "stackdome-e2e-")
	if err != nil {
		return fail(err)
	}
	if err := os.WriteFile(filepath.Join(s.Scratch, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return fail(err)
	}
	keep := os.Getenv("STACKDOME_E2E_KEEP") != ""
	cl.Add(func() {
		if keep {
			fmt.Fprintf(os.Stderr, "e2e: kept %s\n", s.Scratch)
			return
		}
		os.RemoveAll(s.Scratch)
	})

	ctx := context.Background()
	start = time.Now()
	// The Service range is never dialed: nothing runs pods.
	c, err := StartCluster(ctx, s.BinDir, filepath.Join(s.Scratch, "cluster"), "10.0.0.0/24")
	if err != nil {
		return fail(fmt.Errorf("starting control plane: %w", err))
	}
	cl.Add(c.Stop)
	s.Cluster = c
	fmt.Fprintf(os.Stderr, "e2e: control plane %s up in %s at %s\n", ClusterVersion, time.Since(start).Round(100*time.Millisecond), c.Kube.Base)

	// What a cluster running stackdome has before the chart: Traefik's
	// CRDs (from its pinned chart) and Metacontroller's.
	start = time.Now()
	if err := s.installPrerequisiteCRDs(ctx, c.Kube); err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "e2e: Traefik's and Metacontroller's CRDs Established in %s\n", time.Since(start).Round(100*time.Millisecond))

	suite = s
	code = m.Run()
	if code != 0 {
		for _, p := range c.Procs {
			fmt.Fprintf(os.Stderr, "e2e: last lines of %s:\n%s\n", p.Name, Indent(p.Tail(15)))
		}
	}
	return code
}

// removeStaleScratch removes the scratch directories matching pattern (in
// os.TempDir) of earlier runs whose test binary is gone, read from the pid
// file each holds: a panic or a kill -9 exits without running the suite's
// cleanups (the processes die with it through Pdeathsig; their files stay;
// StartNode sweeps what a node left running).
func removeStaleScratch(pattern string) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), pattern))
	for _, dir := range dirs {
		data, err := os.ReadFile(filepath.Join(dir, "pid"))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err == nil && pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			os.RemoveAll(dir)
		}
	}
}

// Fixture is one test's view of the package's control plane: the Suite
// TestMain set up (its Cluster, Root, Shared, Kubectl, Scratch, …), the API
// client Kube, and Namespace, made for this test alone and deleted when it
// ends (the namespace controller removes what is left inside). A Fixture
// belongs to the t it was made from: a method without a t parameter fails,
// skips and cleans up on that test, and is called from its goroutine; one
// with a t parameter reports on that t (a subtest's). A subtest that needs a
// namespace of its own makes its own Fixture.
type Fixture struct {
	*Suite
	Kube      *Kube
	Namespace string

	t *testing.T
}

// NewFixture makes t's fixture; it fails t at once when the package's
// TestMain is not framework.TestMain or the namespace cannot be created.
func NewFixture(t *testing.T) *Fixture {
	t.Helper()
	if suite == nil {
		t.Fatal("no control plane: the package's TestMain must be framework.TestMain")
	}
	f := &Fixture{Suite: suite, Kube: suite.Cluster.Kube, t: t}
	k := f.Kube
	o, err := k.Create(t.Context(), "/api/v1/namespaces", Obj{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": Obj{"generateName": "e2e-", "labels": Obj{"stackdome.io/e2e": "true"}},
	})
	if err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	name := Dig(o, "metadata", "name").(string)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := k.Do(ctx, "DELETE", "/api/v1/namespaces/"+name, "", nil, nil); err != nil && !IsCode(err, 404) {
			t.Errorf("deleting namespace %s: %v", name, err)
		}
	})
	f.Namespace = name
	return f
}

// WaitPods waits until exactly n pods match selector in the fixture's
// namespace and returns them; it fails the test when a control-plane
// process exits or a minute passes.
func (f *Fixture) WaitPods(selector string, n int) []Obj {
	t := f.t
	t.Helper()
	var pods []Obj
	err := WaitUntil(60*time.Second, 200*time.Millisecond, fmt.Sprintf("%d pod(s) %q in %s", n, selector, f.Namespace), func() (bool, error) {
		if err := f.Cluster.Healthy(); err != nil {
			return false, err
		}
		var err error
		pods, err = f.Kube.List(t.Context(), "/api/v1/namespaces/"+f.Namespace+"/pods", selector)
		if err != nil {
			return false, err
		}
		if len(pods) != n {
			return false, fmt.Errorf("%d pods", len(pods))
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pods
}
