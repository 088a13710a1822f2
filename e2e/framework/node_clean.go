//go:build e2e

package framework

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

// hostSnapshot is the machine's state a node could change: what CheckClean
// compares before StartNode and after Stop.
type hostSnapshot map[string][]string // aspect → sorted lines

// defaultPaths are where containerd, runc, the CNI plugins and the kubelet
// write when nothing says otherwise: none may appear.
var defaultPaths = []string{
	"/var/lib/cni", "/var/lib/kubelet", "/var/lib/containerd", "/var/log/pods", "/var/log/containers",
	"/run/containerd", "/run/netns", "/run/xtables.lock", "/opt/containerd", "/etc/cni",
}

var counters = regexp.MustCompile(`\[\d+:\d+\]`)

func takeHostSnapshot() (hostSnapshot, error) {
	s := hostSnapshot{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	for _, l := range strings.Split(strings.TrimSpace(string(mi)), "\n") {
		// mount point, options, then after "-": type, source (IDs differ).
		f := strings.Fields(l)
		if len(f) < 5 {
			continue
		}
		rest := ""
		for i, x := range f {
			if x == "-" {
				rest = strings.Join(f[i+1:], " ")
			}
		}
		s["mount"] = append(s["mount"], f[4]+" "+rest)
	}

	mounts, err := cgroupMounts()
	if err != nil {
		return nil, err
	}
	for _, m := range mounts {
		_ = filepath.WalkDir(m, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				s["cgroup"] = append(s["cgroup"], path)
			}
			return nil
		})
	}

	for _, c := range []struct {
		aspect string
		argv   []string
	}{
		{"netns", []string{"ip", "netns", "list"}},
		{"link", []string{"ip", "-o", "link", "show"}},
		{"nft", []string{"nft", "list", "ruleset"}},
		{"iptables", []string{"iptables-save"}},
		{"ip6tables", []string{"ip6tables-save"}},
		{"ipset", []string{"ipset", "list", "-n"}},
	} {
		out, err := output(ctx, c.argv...)
		if err != nil {
			return nil, err
		}
		for _, l := range strings.Split(out, "\n") {
			// Comments carry a time; counters move with traffic.
			if l = strings.TrimSpace(counters.ReplaceAllString(l, "")); l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			if c.aspect == "link" {
				// "<index>: <name>: <flags> ... state" — names only.
				if f := strings.Fields(l); len(f) > 1 {
					l, _, _ = strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
				}
			}
			s[c.aspect] = append(s[c.aspect], l)
		}
	}

	for _, sc := range kubeletSysctls {
		v, err := os.ReadFile(filepath.Join("/proc/sys", sc))
		if err != nil {
			return nil, err
		}
		s["sysctl"] = append(s["sysctl"], sc+"="+strings.TrimSpace(string(v)))
	}
	for _, p := range defaultPaths {
		if _, err := os.Lstat(p); err == nil {
			s["path"] = append(s["path"], p)
		}
	}
	for _, v := range s {
		sort.Strings(v)
	}
	return s, nil
}

// growOnly are the aspects in which only an addition can be the node's: its
// processes cannot unmount, remove or delete the machine's own mounts,
// cgroups, links or paths from inside their namespaces, while the other
// programs of a shared machine come and go with theirs.
var growOnly = map[string]bool{"mount": true, "cgroup": true, "link": true, "netns": true, "path": true}

// nodeCgroupName matches the cgroups a node makes: its own root, what the
// kubelet makes below it (kubepods, its QoS classes, pod<uid>) and runc's
// container IDs. Another program's cgroup that appears meanwhile (a build's
// buildah-…) is not the node's.
var nodeCgroupName = regexp.MustCompile(`^(stackdome-node-\d+|runtime|kubepods.*|besteffort|burstable|guaranteed|pod[0-9a-f-]+|[0-9a-f]{64}|k8s\.io|containerd.*|system\.slice)$`)

// nodeMount reports whether a mount point (a "mount" line) is one a node's
// process could leave in the root mount namespace: under the node's
// directory, /var, /run (its overlays and what they hold), /proc/sys (the
// sysctl files) or /opt/containerd. Podman's and Buildah's storage
// (/var/lib/containers) is another program's.
func nodeMount(line, dir string) bool {
	mp, _, _ := strings.Cut(line, " ")
	if strings.HasPrefix(mp, "/var/lib/containers/") {
		return false
	}
	for _, p := range []string{dir, "/var", "/run", "/proc/sys", "/opt/containerd"} {
		if mp == p || strings.HasPrefix(mp, p+"/") {
			return true
		}
	}
	return false
}

// diff lists what is in after and not in before (+) and the reverse (-), per
// aspect; in a growOnly aspect only additions, of cgroups only those named
// as a node names them and of mounts only those at a node's paths (dir is
// the node's directory).
func (before hostSnapshot) diff(after hostSnapshot, dir string) []string {
	var out []string
	aspects := map[string]bool{}
	for a := range before {
		aspects[a] = true
	}
	for a := range after {
		aspects[a] = true
	}
	var names []string
	for a := range aspects {
		names = append(names, a)
	}
	sort.Strings(names)
	for _, a := range names {
		b, c := set(before[a]), set(after[a])
		for _, l := range after[a] {
			switch {
			case b[l]:
			case a == "cgroup" && !nodeCgroupName.MatchString(filepath.Base(l)):
			case a == "mount" && !nodeMount(l, dir):
			default:
				out = append(out, a+": + "+l)
			}
		}
		for _, l := range before[a] {
			if !c[l] && !growOnly[a] {
				out = append(out, a+": - "+l)
			}
		}
	}
	return out
}

func set(ls []string) map[string]bool {
	m := make(map[string]bool, len(ls))
	for _, l := range ls {
		m[l] = true
	}
	return m
}

// CheckClean, after Stop, compares the machine with what it was before
// StartNode: mounts (/proc/self/mountinfo), the cgroup directories of every
// hierarchy, network namespaces and links, the root namespace's nft,
// iptables, ip6tables and ipset rules, the three sysctls the kubelet sets,
// the default paths of containerd, the CNI plugins and the kubelet, and
// processes naming the node's directory. It returns every difference the
// node can have made: on a machine others share, a mount or cgroup another
// program adds or removes meanwhile is not one (diff says which count).
func (n *Node) CheckClean() error {
	after, err := takeHostSnapshot()
	if err != nil {
		return fmt.Errorf("taking the machine's state after the node: %w", err)
	}
	d := n.before.diff(after, n.paths.dir)
	// Its going is not checked above (growOnly): the test host's root-side
	// link was there before StartNode.
	if n.cfg.Host != nil && exec.Command("ip", "link", "show", n.cfg.Host.hostLink).Run() == nil {
		d = append(d, "link: still there: "+n.cfg.Host.hostLink)
	}
	for _, pid := range procsNaming(n.paths.dir) {
		d = append(d, fmt.Sprintf("process: + %d %s", pid, cmdline(pid)))
	}
	if len(d) > 0 {
		return fmt.Errorf("the node left the machine changed:\n%s", Indent(strings.Join(d, "\n")))
	}
	return nil
}

func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}
