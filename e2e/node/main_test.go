//go:build e2e

// Package node runs the e2e suite's pods on a real node: containers from
// images, run by a real kubelet, containerd and runc, networked by the
// bridge CNI plugin, kube-proxy (nftables) and kube-router (NetworkPolicy),
// named by CoreDNS and placed by kube-scheduler, all inside a network
// namespace and a mount namespace the suite makes (framework.StartNode).
//
// TestMain starts a control plane of its own and the node once for the
// package, imports the images, and afterwards stops everything and fails the
// run if the machine is not as it was (framework.Node.CheckClean). Run it with
// `make e2e`.
package node

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// Suite is what TestMain sets up for the package's tests.
type Suite struct {
	Root    string // repository root
	Cluster *framework.Cluster
	Node    *framework.Node
	Kubectl string // the kubectl binary
	Tmp     string // per-run scratch, removed at exit
}

// suite is the one value TestMain hands the tests.
var suite *Suite

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	var cl framework.Cleanups
	defer cl.Run()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "e2e/node: %v: stopping the node and the control plane\n", s)
		cl.Run()
		os.Exit(2)
	}()
	fail := func(err error) int {
		fmt.Fprintf(os.Stderr, "e2e/node: %v\n", err)
		return 1
	}

	s, err := setUp(context.Background(), &cl)
	if err != nil {
		return fail(err)
	}
	suite = s
	code := m.Run()
	if code != 0 {
		for _, p := range append(s.Cluster.Procs, s.Node.Procs()...) {
			fmt.Fprintf(os.Stderr, "e2e/node: last lines of %s:\n%s\n", p.Name, framework.Indent(p.Tail(15)))
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

// setUp builds what is missing, starts the control plane and the node, and
// imports the images; cl stops them.
func setUp(ctx context.Context, cl *framework.Cleanups) (*Suite, error) {
	root, err := filepath.Abs("../..")
	if err != nil {
		return nil, err
	}
	s := &Suite{Root: root}
	step := func(what string, start time.Time) {
		fmt.Fprintf(os.Stderr, "e2e/node: %s in %s\n", what, time.Since(start).Round(100*time.Millisecond))
	}

	start := time.Now()
	binDir, err := framework.BuildControlPlane(root)
	if err != nil {
		return nil, err
	}
	nodeBin, err := framework.NodeBinaries(ctx)
	if err != nil {
		return nil, err
	}
	if s.Kubectl, err = framework.KubectlBinary(root); err != nil {
		return nil, err
	}
	step("binaries ready ("+binDir+", "+nodeBin+")", start)

	if s.Tmp, err = os.MkdirTemp("", "stackdome-e2e-node-"); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(s.Tmp, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o600); err != nil {
		return nil, err
	}
	keep := os.Getenv("STACKDOME_E2E_KEEP") != ""
	cl.Add(func() {
		if keep {
			fmt.Fprintf(os.Stderr, "e2e/node: kept %s\n", s.Tmp)
			return
		}
		os.RemoveAll(s.Tmp)
	})

	host, err := framework.NewTestHost()
	if err != nil {
		return nil, fmt.Errorf("the node's network namespace: %w", err)
	}
	start = time.Now()
	s.Cluster, err = framework.StartCluster(ctx, binDir, filepath.Join(s.Tmp, "cluster"), host.ServiceRange().String(),
		framework.ForRealNode(host.HostIP, framework.NodePodCIDR(host)))
	if err != nil {
		host.Close()
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	cl.Add(s.Cluster.Stop)
	step("control plane "+framework.ClusterVersion+" up at "+s.Cluster.Kube.Base, start)

	start = time.Now()
	images, err := buildSmokeImages(root, s.Tmp)
	if err != nil {
		host.Close()
		return nil, err
	}
	step("images built", start)

	start = time.Now()
	s.Node, err = framework.StartNode(ctx, framework.NodeConfig{
		Cluster:      s.Cluster,
		BinDir:       nodeBin,
		Dir:          filepath.Join(s.Tmp, "node"),
		Host:         host,
		SandboxImage: pauseImage,
	})
	if err != nil {
		return nil, err
	}
	cl.Add(s.Node.Stop) // a second Stop after runMain's does nothing
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
	return s, nil
}
