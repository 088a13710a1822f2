//go:build e2e

package framework

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// nodeCgroups is the real node's own cgroup, the same path in every
// hierarchy: the kubelet's cgroupRoot (it makes kubepods/… below it) and, in
// "runtime" beside that, containerd and the node's other processes, so that
// containerd's shims land there too. Everything the node ever ran is below
// it, which is how Stop finds what to kill and what to remove.
type nodeCgroups struct {
	name  string   // "/stackdome-node-<pid>"
	roots []string // <hierarchy mount>/<name>
}

// cgroupMounts are the mount points of every cgroup hierarchy (v1 and v2).
func cgroupMounts() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ms []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent maj:min root mountpoint opts ... - fstype source superopts
		fields := strings.Fields(sc.Text())
		for i, fl := range fields {
			if fl == "-" && i+1 < len(fields) && (fields[i+1] == "cgroup" || fields[i+1] == "cgroup2") {
				ms = append(ms, fields[4])
			}
		}
	}
	sort.Strings(ms)
	return ms, sc.Err()
}

// newNodeCgroups makes name and name/runtime in every hierarchy.
func newNodeCgroups(name string) (*nodeCgroups, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, fmt.Errorf("reading cgroup mounts: %w", err)
	}
	g := &nodeCgroups{name: name}
	for _, m := range mounts {
		root := filepath.Join(m, name)
		if err := os.MkdirAll(filepath.Join(root, "runtime"), 0o755); err != nil {
			g.remove()
			return nil, fmt.Errorf("making cgroup %s: %w", root, err)
		}
		g.roots = append(g.roots, root)
		// A v1 cpuset cgroup takes no process until it has CPUs and memory
		// nodes; its parent's are the machine's.
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			v, err := os.ReadFile(filepath.Join(m, f))
			if err != nil {
				continue
			}
			for _, d := range []string{root, filepath.Join(root, "runtime")} {
				if err := os.WriteFile(filepath.Join(d, f), v, 0o644); err != nil {
					g.remove()
					return nil, fmt.Errorf("setting %s of %s: %w", f, d, err)
				}
			}
		}
	}
	return g, nil
}

// add moves pid into name/runtime of every hierarchy.
func (g *nodeCgroups) add(pid int) error {
	for _, r := range g.roots {
		p := filepath.Join(r, "runtime", "cgroup.procs")
		if err := os.WriteFile(p, []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("moving %d into %s: %w", pid, p, err)
		}
	}
	return nil
}

// pids are the processes in any cgroup below the node's.
func (g *nodeCgroups) pids() []int {
	seen := map[int]bool{}
	for _, r := range g.roots {
		_ = filepath.WalkDir(r, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			data, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
			if err != nil {
				return nil
			}
			for _, f := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(f); err == nil {
					seen[pid] = true
				}
			}
			return nil
		})
	}
	pids := make([]int, 0, len(seen))
	for p := range seen {
		pids = append(pids, p)
	}
	sort.Ints(pids)
	return pids
}

// kill sends SIGKILL to every process below the node's cgroup until none is
// left (a process may fork while it is killed), or timeout passes.
func (g *nodeCgroups) kill(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		pids := g.pids()
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes left in cgroup %s after %s: %v", g.name, timeout, pids)
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// remove removes the node's cgroups, deepest first, in every hierarchy. A
// cgroup whose last process has just died may still be busy for a moment.
func (g *nodeCgroups) remove() error {
	var errs []error
	for _, r := range g.roots {
		var dirs []string
		_ = filepath.WalkDir(r, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			var err error
			for range 50 {
				if err = syscall.Rmdir(dirs[i]); err == nil || errors.Is(err, syscall.ENOENT) {
					err = nil
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", dirs[i], err))
			}
		}
	}
	return errors.Join(errs...)
}
