//go:build e2e

package framework

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Stop tears the node down, in reverse: CoreDNS, kube-router, kube-proxy, the
// kubelet, the scheduler and containerd stop (SIGTERM, then SIGKILL); then
// every process left in the node's cgroups — the pods' containers, their
// shims, the mount namespace's holder — is killed. With the holder gone the
// mount namespace ends, and with it every mount containerd and the kubelet
// made (overlays, volumes, the pods' network namespace files); the node's
// cgroups are removed; the network namespace goes with its holder (Host.Close),
// taking the pods' network namespaces, the bridge and every nft, iptables and
// ipset rule of the node. Safe to call more than once; CheckClean says
// whether anything is left.
func (n *Node) Stop() {
	for i := len(n.procs) - 1; i >= 0; i-- {
		n.procs[i].Stop(10 * time.Second)
	}
	n.procs = nil
	if n.cg != nil {
		if err := n.cg.kill(30 * time.Second); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: node: %v\n", err)
		}
	}
	if n.mountns != nil {
		n.mountns.Stop(5 * time.Second)
		n.mountns = nil
	}
	// A process that left the node's cgroups names the node's directory in
	// its command line (every configuration, socket and log is there).
	for _, pid := range procsNaming(n.paths.dir) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if n.cg != nil {
		if err := n.cg.remove(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: node: %v\n", err)
		}
	}
	if n.cfg.Host != nil {
		n.cfg.Host.Close()
	}
}

// procsNaming are the processes whose command line contains s.
func procsNaming(s string) []int {
	if s == "" {
		return nil
	}
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmd), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// serviceRangePrefix is the cluster's Service range.
func (c *Cluster) serviceRangePrefix() netip.Prefix {
	return netip.MustParsePrefix(c.serviceRange)
}

// output runs argv until it exits or ctx ends, and returns its stdout; the
// error carries stderr.
func output(ctx context.Context, argv ...string) (string, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = 5 * time.Second
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}
