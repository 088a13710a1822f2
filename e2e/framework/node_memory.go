//go:build e2e

package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// MemoryUse is the resident memory of one of the node's processes, or of a
// group of them.
type MemoryUse struct {
	Name  string
	Procs int
	RSS   int64 // bytes, VmRSS
}

// Memory is the resident memory of each node process (kube-scheduler, which
// runs beside the control plane, included), then of the containerd shims
// and of the pods' containers, each group summed.
func (n *Node) Memory() []MemoryUse {
	var out []MemoryUse
	mine := map[int]bool{}
	for _, p := range n.procs {
		mine[p.Pid()] = true
		out = append(out, MemoryUse{Name: p.Name, Procs: 1, RSS: rss(p.Pid())})
	}
	if n.mountns != nil {
		mine[n.mountns.Pid()] = true
	}
	shims, pods := MemoryUse{Name: "containerd shims"}, MemoryUse{Name: "pods' containers"}
	if n.cg != nil && len(n.cg.roots) > 0 {
		// One hierarchy is enough: every process is in each.
		root := n.cg.roots[0]
		for _, g := range []struct {
			use *MemoryUse
			dir string
		}{{&shims, filepath.Join(root, "runtime")}, {&pods, filepath.Join(root, "kubepods")}} {
			for _, pid := range cgroupPids(g.dir) {
				if !mine[pid] {
					g.use.Procs++
					g.use.RSS += rss(pid)
				}
			}
		}
	}
	return append(out, shims, pods)
}

// FormatMemory is one line per use, in MiB.
func FormatMemory(ms []MemoryUse) string {
	var b strings.Builder
	for _, m := range ms {
		fmt.Fprintf(&b, "%s: %.0f MiB (%d processes)\n", m.Name, float64(m.RSS)/(1<<20), m.Procs)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// cgroupPids are the processes in dir and below (cgroup v1: not recursive).
func cgroupPids(dir string) []int {
	var pids []int
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	return pids
}

// rss is the process's VmRSS in bytes (0 if it is gone).
func rss(pid int) int64 {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
