//go:build e2e

package framework

import (
	"context"
	"fmt"
	"io/fs"
	"os"
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
					l = strings.TrimSuffix(f[1], ":")
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

// diff lists what is in after and not in before (+) and the reverse (-), per
// aspect.
func (before hostSnapshot) diff(after hostSnapshot) []string {
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
			if !b[l] {
				out = append(out, a+": + "+l)
			}
		}
		for _, l := range before[a] {
			if !c[l] {
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
// processes naming the node's directory. It returns every difference.
func (n *Node) CheckClean() error {
	after, err := takeHostSnapshot()
	if err != nil {
		return fmt.Errorf("taking the machine's state after the node: %w", err)
	}
	var d []string
	for _, l := range n.before.diff(after) {
		// The test host's root side was there before StartNode, and Stop
		// removes it with the namespace (Host.Close): its going is expected.
		if l == "link: - "+n.cfg.Host.hostLink {
			continue
		}
		d = append(d, l)
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
