//go:build e2e

package framework

import (
	"encoding/json"
	"errors"
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

// TestHost is the machine the real node runs in (Node, NodeConfig.Host): a
// network namespace joined to the root one by a veth pair on a private /24
// that exists only on this machine. The root side is HostIP (where the
// control plane listens for the node), the node GuestIP; both lie in Prefix.
//
// The namespace is anonymous: it is held by one process (sleep) that dies
// with the test binary (Pdeathsig), and the kernel removes the namespace, the
// veth pair, its addresses and its route when the last process in it is
// gone — after a crash, a -timeout or a kill -9 as after a clean run. Nothing
// is left to clean on the next run, and names are unique per process.
type TestHost struct {
	Prefix          netip.Prefix
	HostIP, GuestIP netip.Addr
	hostLink        string
	guestLink       string
	netns           string // /proc/<holder>/ns/net
	holder          *exec.Cmd
	lock            *lockFile // held while the /24 is ours
}

// testHostNet is the range the /24 of a test host is taken from: 10.213.0.0/16,
// nothing else on the machine uses it (newTestHost checks the routes).
const testHostNet = "10.213.%d.0/24"

// NewTestHost makes the namespace, the veth pair and the addresses. It
// needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN); the error says so.
func NewTestHost() (_ *TestHost, err error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the test host needs root: a network namespace and a veth pair (run the e2e suite as root, as CI does)")
	}
	for _, tool := range []string{"ip", "nsenter"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("the test host needs %s (iproute2, util-linux): %w", tool, err)
		}
	}
	h := &TestHost{}
	defer func() {
		if err != nil {
			h.Close()
		}
	}()
	if err := h.claimPrefix(); err != nil {
		return nil, err
	}

	h.holder = exec.Command("sleep", "infinity")
	h.holder.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := h.holder.Start(); err != nil {
		return nil, fmt.Errorf("starting the test host's namespace: %w", err)
	}
	pid := h.holder.Process.Pid
	h.netns = "/proc/" + strconv.Itoa(pid) + "/ns/net"
	h.hostLink = "sdh" + strconv.Itoa(os.Getpid())
	h.guestLink = "sdg" + strconv.Itoa(os.Getpid())

	bits := strconv.Itoa(h.Prefix.Bits())
	steps := [][]string{
		{"ip", "link", "add", h.hostLink, "type", "veth", "peer", "name", h.guestLink, "netns", strconv.Itoa(pid)},
		{"ip", "addr", "add", h.HostIP.String() + "/" + bits, "dev", h.hostLink},
		{"ip", "link", "set", h.hostLink, "up"},
		h.inside("ip", "addr", "add", h.GuestIP.String()+"/"+bits, "dev", h.guestLink),
		h.inside("ip", "link", "set", h.guestLink, "up"),
		h.inside("ip", "link", "set", "lo", "up"),
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// claimPrefix takes a /24 of testHostNet that no route on the machine
// overlaps, holding a lock file for it (in $TMPDIR/stackdome-e2e-net,
// removed with the claim) so that two suites running at once never take
// the same one.
func (h *TestHost) claimPrefix() error {
	routes, err := routedPrefixes()
	if err != nil {
		return err
	}
	dir := filepath.Join(os.TempDir(), "stackdome-e2e-net")
	start := os.Getpid() % 256
	for i := range 256 {
		n := (start + i) % 256
		p := netip.MustParsePrefix(fmt.Sprintf(testHostNet, n))
		if overlapsAny(p, routes) {
			continue
		}
		l, err := tryLockFile(filepath.Join(dir, strconv.Itoa(n)+".lock"))
		if err != nil {
			return err
		}
		if l == nil {
			continue
		}
		h.lock = l
		h.Prefix = p
		h.HostIP = p.Addr().Next()
		h.GuestIP = h.HostIP.Next()
		return nil
	}
	return fmt.Errorf("no free /24 in %s", strings.Replace(testHostNet, "%d", "x", 1))
}

// routedPrefixes are the destinations of every route of every table.
func routedPrefixes() ([]netip.Prefix, error) {
	out, err := exec.Command("ip", "-j", "-4", "route", "show", "table", "all").Output()
	if err != nil {
		return nil, fmt.Errorf("ip route show: %w", err)
	}
	var routes []struct{ Dst string }
	if err := json.Unmarshal(out, &routes); err != nil {
		return nil, fmt.Errorf("decoding ip -j route: %w", err)
	}
	var ps []netip.Prefix
	for _, r := range routes {
		if r.Dst == "default" {
			continue
		}
		if p, err := netip.ParsePrefix(r.Dst); err == nil {
			ps = append(ps, p)
		} else if a, err := netip.ParseAddr(r.Dst); err == nil {
			ps = append(ps, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	return ps, nil
}

func overlapsAny(p netip.Prefix, ps []netip.Prefix) bool {
	for _, q := range ps {
		if p.Overlaps(q) {
			return true
		}
	}
	return false
}

// ServiceRange is the upper half of the test host's /24: the node's
// cluster's --service-cluster-ip-range, routed to the node, where
// kube-proxy makes a ClusterIP answer.
func (h *TestHost) ServiceRange() netip.Prefix {
	a := h.Prefix.Addr().As4()
	a[3] = 128
	return netip.PrefixFrom(netip.AddrFrom4(a), h.Prefix.Bits()+1)
}

// inside is argv run inside the test host's namespace (nsenter execs it, so
// the process keeps its pid and its Pdeathsig).
func (h *TestHost) inside(argv ...string) []string {
	return append([]string{"nsenter", "--net=" + h.netns, "--"}, argv...)
}

// Close removes the namespace (and with it the veth pair and addresses) by
// ending its holder, then releases the /24. Processes started inside must
// be stopped first; the namespace lives as long as any of them does.
func (h *TestHost) Close() {
	if h.holder != nil && h.holder.Process != nil {
		_ = syscall.Kill(-h.holder.Process.Pid, syscall.SIGKILL)
		_ = h.holder.Wait()
		h.holder = nil
	}
	if h.hostLink != "" {
		// Gone with the namespace already; this only covers a pair whose
		// peer never made it into the namespace.
		_ = exec.Command("ip", "link", "del", h.hostLink).Run()
	}
	if h.lock != nil {
		h.lock.release()
		h.lock = nil
	}
}

// run runs argv, returning its output in the error.
func run(argv ...string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.WaitDelay = 5 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
