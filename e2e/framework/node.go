//go:build e2e

package framework

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// NodeConfig is what StartNode needs.
type NodeConfig struct {
	// Cluster is the control plane, started with ForRealNode(Host.HostIP,
	// NodePodCIDR(Host)).
	Cluster *Cluster
	// BinDir holds the node's binaries (NodeBinaries).
	BinDir string
	// Dir holds the node's state, configuration and logs (<name>.log per
	// process); the caller removes it after Stop.
	Dir string
	// Host is the network namespace the node runs in; the node owns it from
	// StartNode on and closes it in Stop.
	Host *TestHost
	// SandboxImage is the pause image containerd's configuration names; it
	// must be imported (Import) before the first pod starts.
	SandboxImage string
	// Name is the node's name (default "e2e-node").
	Name string
}

// Node is a real Kubernetes node: containerd, runc, the bridge CNI plugin and
// the kubelet in a private mount namespace, with kube-proxy (nftables),
// kube-router's NetworkPolicy controller and CoreDNS, all in the node's
// network namespace; and kube-scheduler beside the control plane. It changes
// no global state of the machine (CheckClean proves it after Stop).
type Node struct {
	cfg     NodeConfig
	name    string
	paths   nodePaths
	nodeIP  netip.Addr
	podCIDR netip.Prefix
	dnsIP   netip.Addr
	before  hostSnapshot
	cg      *nodeCgroups
	mountns *Proc
	procs   []*Proc // started in order, stopped in reverse
	// Timings are how long the steps of StartNode took.
	Timings NodeTimings
}

// NodeTimings are measured by StartNode.
type NodeTimings struct {
	Containerd, NodeReady, Addons time.Duration // containerd answering; kubelet start to node Ready; kube-proxy, kube-router, CoreDNS ready
}

// NodePodCIDR is the node's pod CIDR: the lower /25 of the /24 of
// 10.214.0.0/16 with the third octet of the test host's /24 (which the test
// host's lock makes ours): room for 126 pods. Nothing outside the node's
// network namespace routes to it.
func NodePodCIDR(h *TestHost) netip.Prefix {
	a := h.Prefix.Addr().As4()
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 214, a[2], 0}), 25)
}

// StartNode starts the node and returns once it is Ready and kube-proxy,
// kube-router and CoreDNS answer. On error everything started is stopped.
func StartNode(ctx context.Context, cfg NodeConfig) (*Node, error) {
	if cfg.Cluster == nil || cfg.Host == nil || cfg.BinDir == "" || cfg.Dir == "" || cfg.SandboxImage == "" {
		return nil, errors.New("StartNode needs Cluster, Host, BinDir, Dir and SandboxImage")
	}
	if cfg.Name == "" {
		cfg.Name = "e2e-node"
	}
	for _, tool := range []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr", "unshare", "nsenter", "mount", "nft", "iptables", "ipset"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("the real node needs %s (apt: containerd runc nftables iptables ipset util-linux): %w", tool, err)
		}
	}
	n := &Node{cfg: cfg, name: cfg.Name, paths: newNodePaths(cfg.Dir), nodeIP: cfg.Host.GuestIP, podCIDR: NodePodCIDR(cfg.Host)}
	sr := cfg.Cluster.serviceRangePrefix()
	dns := sr.Masked().Addr()
	for range 10 {
		dns = dns.Next()
	}
	n.dnsIP = dns // the tenth of the range, as kubeadm picks it
	swept, err := sweepStaleNodes()
	if err != nil {
		return nil, fmt.Errorf("sweeping what a crashed run's node left: %w", err)
	}
	if len(swept) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: swept the node cgroups of crashed runs: %v\n", swept)
	}
	if n.before, err = takeHostSnapshot(); err != nil {
		return nil, err
	}
	if err := n.start(ctx); err != nil {
		n.Stop()
		return nil, fmt.Errorf("starting the node: %w", err)
	}
	return n, nil
}

func (n *Node) start(ctx context.Context) error {
	c, p := n.cfg.Cluster, n.paths
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return err
	}
	routes, err := routedPrefixes()
	if err != nil {
		return err
	}
	if overlapsAny(n.podCIDR, routes) {
		return fmt.Errorf("pod CIDR %s overlaps a route of this machine", n.podCIDR)
	}
	if n.cg, err = newNodeCgroups("/stackdome-node-" + strconv.Itoa(os.Getpid())); err != nil {
		return err
	}
	if n.mountns, err = startMountNamespace(p.dir); err != nil {
		return err
	}
	if err := n.cg.add(n.mountns.Pid()); err != nil {
		return err
	}

	// Credentials: each component its own user, as kubeadm names them.
	certDir := filepath.Join(p.dir, "pki")
	if err := os.MkdirAll(certDir, 0o700); err != nil {
		return err
	}
	creds := map[string]string{}
	for _, u := range []struct{ name, user, group string }{
		{"kubelet", "system:node:" + n.name, "system:nodes"},
		{"kube-proxy", "system:kube-proxy", ""},
		{"kube-scheduler", "system:kube-scheduler", ""},
		{"coredns", coreDNSUser, ""},
		{"kube-router", kubeRouterUser, ""},
	} {
		var groups []string
		if u.group != "" {
			groups = []string{u.group}
		}
		if creds[u.name], err = c.nodeCredential(certDir, u.name, u.user, groups); err != nil {
			return err
		}
	}
	servingCert, servingKey, err := c.nodeServingCert(certDir, "kubelet-serving", n.nodeIP)
	if err != nil {
		return err
	}
	if err := createAddons(ctx, c.Kube, n.dnsIP, n.nodeIP); err != nil {
		return err
	}

	files := map[string]string{
		p.containerdConfig: containerdConfig(p, n.cfg.SandboxImage),
		filepath.Join(p.cniConfDir, "10-e2e.conflist"): cniConfig(p, n.podCIDR),
		p.kubeletConfig:   kubeletConfig(p, n.cg.name, c.pki.caFile, servingCert, servingKey, n.nodeIP, n.dnsIP, n.podCIDR),
		p.resolvConf:      "", // pods get the cluster's DNS and search path only
		p.kubeProxyConfig: kubeProxyConfig(creds["kube-proxy"], n.name, n.podCIDR),
		p.corefile:        corefile(creds["coredns"], n.nodeIP),
	}
	for path, data := range files {
		if err := writeFile(path, data); err != nil {
			return err
		}
	}

	start := time.Now()
	containerd, err := n.startInside("containerd", "containerd", "--config", p.containerdConfig)
	if err != nil {
		return err
	}
	if err := WaitUntil(60*time.Second, 100*time.Millisecond, "containerd", func() (bool, error) {
		if done, err := containerd.Exited(); done {
			return false, fmt.Errorf("containerd exited (%v):\n%s", err, Indent(containerd.Tail(30)))
		}
		_, err := n.ctr(ctx, "version")
		return err == nil, err
	}); err != nil {
		return err
	}
	n.Timings.Containerd = time.Since(start)

	scheduler, err := startProc(p.dir, "kube-scheduler", filepath.Join(n.cfg.BinDir, "kube-scheduler"),
		"--kubeconfig="+creds["kube-scheduler"],
		"--authentication-kubeconfig="+creds["kube-scheduler"],
		"--authorization-kubeconfig="+creds["kube-scheduler"],
		"--bind-address=127.0.0.1",
		"--secure-port=0",
		"--leader-elect=false",
		"--v=1",
	)
	if err != nil {
		return err
	}
	n.procs = append(n.procs, scheduler)

	start = time.Now()
	kubelet, err := n.startInside("kubelet", filepath.Join(n.cfg.BinDir, "kubelet"),
		"--config="+p.kubeletConfig,
		"--kubeconfig="+creds["kubelet"],
		"--root-dir="+p.kubeletRoot,
		"--cert-dir="+filepath.Join(p.kubeletRoot, "pki"),
		"--hostname-override="+n.name,
		"--node-ip="+n.nodeIP.String(),
		"--v=1",
	)
	if err != nil {
		return err
	}
	if err := WaitUntil(120*time.Second, 200*time.Millisecond, "node "+n.name+" Ready", func() (bool, error) {
		if err := n.Healthy(); err != nil {
			return false, err
		}
		return n.ready(ctx)
	}); err != nil {
		return fmt.Errorf("%w\nkubelet log:\n%s", err, Indent(kubelet.Tail(30)))
	}
	n.Timings.NodeReady = time.Since(start)
	// kube-router's policy controller reads the node's spec.podCIDR; the CNI
	// configuration already hands out addresses from n.podCIDR.
	if err := WaitUntil(30*time.Second, 200*time.Millisecond, "node "+n.name+" spec.podCIDR "+n.podCIDR.String(), func() (bool, error) {
		o, err := c.Kube.Get(ctx, "/api/v1/nodes/"+n.name)
		if err != nil {
			return false, err
		}
		got := Dig(o, "spec", "podCIDR")
		return got == n.podCIDR.String(), fmt.Errorf("spec.podCIDR is %v (kube-controller-manager allocates it: ForRealNode)", got)
	}); err != nil {
		return err
	}

	start = time.Now()
	if _, err := n.startInside("kube-proxy", filepath.Join(n.cfg.BinDir, "kube-proxy"), "--config="+p.kubeProxyConfig, "--v=1"); err != nil {
		return err
	}
	if _, err := n.startInside("kube-router", filepath.Join(n.cfg.BinDir, "kube-router"),
		"--kubeconfig="+creds["kube-router"],
		"--hostname-override="+n.name,
		"--run-router=false",
		"--run-service-proxy=false",
		"--run-firewall=true",
		"--health-port=20244",
		"--metrics-port=0",
		"--v=1",
	); err != nil {
		return err
	}
	if _, err := n.startInside("coredns", filepath.Join(n.cfg.BinDir, "coredns"), "-conf", p.corefile); err != nil {
		return err
	}
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DialContext: n.DialContext, Proxy: nil}}
	for _, h := range []struct{ what, url string }{
		{"kube-proxy", "http://127.0.0.1:10256/healthz"},
		{"kube-router", "http://127.0.0.1:20244/healthz"},
		{"CoreDNS", "http://127.0.0.1:8181/ready"},
	} {
		if err := WaitUntil(60*time.Second, 200*time.Millisecond, h.what+" "+h.url, func() (bool, error) {
			if err := n.Healthy(); err != nil {
				return false, err
			}
			resp, err := hc.Get(h.url)
			if err != nil {
				return false, err
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK, fmt.Errorf("%s", resp.Status)
		}); err != nil {
			return err
		}
	}
	n.Timings.Addons = time.Since(start)
	return nil
}
