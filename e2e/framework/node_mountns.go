//go:build e2e

package framework

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// kubeletSysctls are the global sysctls the kubelet sets (vm.overcommit_memory=1,
// kernel.panic=10, kernel.panic_on_oops=1: what a node it owns wants). In the
// node's mount namespace each is a plain file bind-mounted over the /proc/sys
// entry, so the kubelet's writes land in the file and the machine keeps its
// values; protectKernelDefaults: true would refuse to start instead.
var kubeletSysctls = []string{"vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops"}

// startMountNamespace starts the process that holds the node's private mount
// namespace (unshare --propagation private: nothing mounted inside shows
// outside). Before it sleeps it mounts, inside:
//   - an overlay on /var and one on /run, whose upper layers are under dir: what
//     containerd, the CNI plugins and the kubelet write at paths they do not
//     let us choose (/var/lib/cni, /run/netns, /var/log/containers, runc's
//     state) goes there and nowhere else;
//   - the kubeletSysctls files.
//
// Every mount dies with the namespace: when its last process is gone.
func startMountNamespace(dir string) (*Proc, error) {
	var script strings.Builder
	script.WriteString("set -e\n")
	for _, top := range []string{"var", "run"} {
		upper, work := filepath.Join(dir, "overlay", top), filepath.Join(dir, "overlay", top+"-work")
		for _, d := range []string{upper, work} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return nil, err
			}
		}
		fmt.Fprintf(&script, "mount -t overlay overlay -o lowerdir=/%s,upperdir=%s,workdir=%s /%s\n", top, upper, work, top)
	}
	for _, s := range kubeletSysctls {
		v, err := os.ReadFile(filepath.Join("/proc/sys", s))
		if err != nil {
			return nil, fmt.Errorf("reading sysctl %s: %w", s, err)
		}
		f := filepath.Join(dir, "sysctl", strings.ReplaceAll(s, "/", "."))
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(f, v, 0o644); err != nil {
			return nil, err
		}
		fmt.Fprintf(&script, "mount --bind %s /proc/sys/%s\n", f, s)
	}
	ready := filepath.Join(dir, "mountns.ready")
	fmt.Fprintf(&script, "touch %s\nexec sleep infinity\n", ready)

	p, err := startProc(dir, "mountns", "unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script.String())
	if err != nil {
		return nil, err
	}
	if err := WaitUntil(10*time.Second, 20*time.Millisecond, "the node's mount namespace", func() (bool, error) {
		if done, err := p.Exited(); done {
			return false, fmt.Errorf("mount namespace setup exited (%v):\n%s", err, Indent(p.Tail(20)))
		}
		_, err := os.Stat(ready)
		return err == nil, nil
	}); err != nil {
		p.Stop(time.Second)
		return nil, err
	}
	return p, nil
}

// mountNS is the namespace file of the holder.
func mountNS(p *Proc) string { return "/proc/" + strconv.Itoa(p.Pid()) + "/ns/mnt" }
