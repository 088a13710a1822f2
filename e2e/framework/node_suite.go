//go:build e2e

package framework

// The run of the real-node suite (e2e/node): NodeTestMain starts a control
// plane and a node once for the package, imports the images, and
// afterwards stops them and fails the run if the machine is not as it was.
// Its Suite is the framework's one package state (suite, fixture.go); each
// test reaches it through NewNodeFixture.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// NodeTestMain builds what is missing, starts the control plane and the
// node (framework.StartNode) once for the package, imports the images (the
// workload images and SmokeImage), runs the package's tests, then stops the
// node and fails the run if it left the machine otherwise than it was
// (Node.CheckClean), whatever happens (an interrupt too); it exits the
// process with the tests' code. The repository root is two levels above the
// working directory, which go test makes the package's (e2e/node). It needs
// root. e2e/node's TestMain is a call of it.
func NodeTestMain(m *testing.M) {
	os.Exit(runNodeSuite(m))
}

func runNodeSuite(m *testing.M) int {
	var cl Cleanups
	defer cl.Run()
	runCleanupsOnSignal(&cl, "e2e/node", "the node and the control plane")
	fail := failWith("e2e/node")

	s, err := setUpNode(context.Background(), &cl)
	if err != nil {
		return fail(err)
	}
	suite = s
	code := m.Run()
	if code != 0 {
		for _, p := range append(s.Cluster.Procs, s.Node.Procs()...) {
			fmt.Fprintf(os.Stderr, "e2e/node: last lines of %s:\n%s\n", p.Name, Indent(p.Tail(15)))
		}
	}

	// The node first, then the proof that it left nothing behind.
	start := time.Now()
	s.Node.Stop()
	if err := s.Node.CheckClean(); err != nil {
		return fail(err)
	}
	fmt.Fprintf(os.Stderr, "e2e/node: node stopped in %s, the machine is as it was\n", time.Since(start).Round(100*time.Millisecond))
	return code
}

// setUpNode builds what is missing, starts the control plane and the node,
// and imports the images; cl stops them.
func setUpNode(ctx context.Context, cl *Cleanups) (*Suite, error) {
	root, err := filepath.Abs("../..")
	if err != nil {
		return nil, err
	}
	s := &Suite{Root: root, Shared: SharedDir(root)}
	step := func(what string, start time.Time) {
		fmt.Fprintf(os.Stderr, "e2e/node: %s in %s\n", what, time.Since(start).Round(100*time.Millisecond))
	}

	start := time.Now()
	if s.BinDir, err = BuildControlPlane(root); err != nil {
		return nil, err
	}
	nodeBin, err := NodeBinaries(ctx)
	if err != nil {
		return nil, err
	}
	if s.Kubectl, err = KubectlBinary(root); err != nil {
		return nil, err
	}
	step("binaries ready ("+s.BinDir+", "+nodeBin+")", start)

	removeStaleScratch("stackdome-e2e-node-*")
	if s.Scratch, err = os.MkdirTemp("", "stackdome-e2e-node-"); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(s.Scratch, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return nil, err
	}
	keep := os.Getenv("STACKDOME_E2E_KEEP") != ""
	cl.Add(func() {
		if keep {
			fmt.Fprintf(os.Stderr, "e2e/node: kept %s\n", s.Scratch)
			return
		}
		os.RemoveAll(s.Scratch)
	})

	host, err := NewTestHost()
	if err != nil {
		return nil, fmt.Errorf("the node's network namespace: %w", err)
	}
	start = time.Now()
	s.Cluster, err = StartCluster(ctx, s.BinDir, filepath.Join(s.Scratch, "cluster"), host.ServiceRange().String(),
		ForRealNode(host.HostIP, NodePodCIDR(host)))
	if err != nil {
		host.Close()
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	cl.Add(s.Cluster.Stop)
	step("control plane "+ClusterVersion+" up at "+s.Cluster.Kube.Base, start)

	start = time.Now()
	built, err := BuildImages(ctx, root)
	if err != nil {
		host.Close()
		return nil, err
	}
	images := []string{}
	for _, a := range built {
		images = append(images, a.Path)
	}
	smoke, err := buildSmokeImage(root, s.Scratch)
	if err != nil {
		host.Close()
		return nil, err
	}
	images = append(images, smoke)
	step("images built", start)

	start = time.Now()
	s.Node, err = StartNode(ctx, NodeConfig{
		Cluster:      s.Cluster,
		BinDir:       nodeBin,
		Dir:          filepath.Join(s.Scratch, "node"),
		Host:         host,
		SandboxImage: ImagePause,
	})
	if err != nil {
		return nil, err
	}
	cl.Add(s.Node.Stop) // a second Stop after runNodeSuite's does nothing
	t := s.Node.Timings
	step(fmt.Sprintf("node %s (%s) Ready (containerd %s, kubelet to Ready %s, kube-proxy, kube-router and CoreDNS %s)",
		s.Node.Name(), s.Node.IP(), t.Containerd.Round(100*time.Millisecond), t.NodeReady.Round(100*time.Millisecond), t.Addons.Round(100*time.Millisecond)), start)

	start = time.Now()
	for _, img := range images {
		if err := s.Node.Import(ctx, img); err != nil {
			return nil, err
		}
	}
	step(fmt.Sprintf("%d images imported", len(images)), start)
	fmt.Fprintf(os.Stderr, "e2e/node: memory of the idle node:\n%s\n", Indent(FormatMemory(s.Node.Memory())))
	return s, nil
}
