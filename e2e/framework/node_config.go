//go:build e2e

package framework

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
)

// nodePaths are the node's files, all under its directory.
type nodePaths struct {
	dir                string
	containerdConfig   string
	containerdSock     string
	cniConfDir         string
	kubeletConfig      string
	kubeletRoot        string
	podLogs            string
	resolvConf         string
	kubeProxyConfig    string
	corefile           string
	containerdRoot     string
	containerdState    string
	hostLocalIPAMState string
}

func newNodePaths(dir string) nodePaths {
	j := func(p ...string) string { return filepath.Join(append([]string{dir}, p...)...) }
	return nodePaths{
		dir:                dir,
		containerdConfig:   j("containerd", "config.toml"),
		containerdSock:     j("containerd", "containerd.sock"),
		containerdRoot:     j("containerd", "root"),
		containerdState:    j("containerd", "state"),
		cniConfDir:         j("cni", "net.d"),
		hostLocalIPAMState: j("cni", "ipam"),
		kubeletConfig:      j("kubelet", "config.json"),
		kubeletRoot:        j("kubelet", "root"),
		podLogs:            j("kubelet", "pod-logs"),
		resolvConf:         j("kubelet", "resolv.conf"),
		kubeProxyConfig:    j("kube-proxy", "config.json"),
		corefile:           j("coredns", "Corefile"),
	}
}

// writeFile writes data at path, making its directory.
func writeFile(path, data string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// containerdConfig: containerd's own root, state and socket; overlayfs; runc
// with cgroupfs; CNI plugins from the Debian package. restrict_oom_score_adj:
// without CAP_SYS_RESOURCE runc cannot lower a container's oom_score_adj, and
// every sandbox fails ("can't get final child's PID from pipe: EOF"). The opt
// plugin would make /opt/containerd; the others are snapshotters this machine
// has no use for.
func containerdConfig(p nodePaths, sandboxImage string) string {
	return fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs", "io.containerd.tracing.processor.v1.otlp"]

[grpc]
  address = %q

[ttrpc]
  address = %q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %q
`, p.containerdRoot, p.containerdState, p.containerdSock, p.containerdSock+".ttrpc", sandboxImage, p.cniConfDir)
}

// cniConfig is the pod network: one bridge, the node the gateway, traffic
// leaving the pod CIDR masqueraded to the node's address (so the API server
// on the root side of the veth pair answers pods), host-local addresses from
// the node's pod CIDR with state of its own.
func cniConfig(p nodePaths, podCIDR netip.Prefix) string {
	return fmt.Sprintf(`{
  "cniVersion": "0.4.0",
  "name": "e2e-pods",
  "plugins": [
    {"type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
     "ipam": {"type": "host-local", "dataDir": %q, "ranges": [[{"subnet": %q}]], "routes": [{"dst": "0.0.0.0/0"}]}},
    {"type": "portmap", "capabilities": {"portMappings": true}},
    {"type": "loopback"}
  ]
}
`, p.hostLocalIPAMState, podCIDR.String())
}

// kubeletConfig is the KubeletConfiguration (JSON is YAML). cgroup v1 is
// allowed (it warns), cgroupfs under a cgroupRoot of the node's own; the
// kernel defaults it would change are the mount namespace's files
// (node_mountns.go); it touches no iptables chain (kube-proxy owns the node's
// rules). The hard eviction thresholds are low: the disk is shared with
// builds, and evicting the suite's pods for them would prove nothing.
func kubeletConfig(p nodePaths, cgroupRoot, caFile, certFile, keyFile string, nodeIP, dnsIP netip.Addr, podCIDR netip.Prefix) string {
	return fmt.Sprintf(`{
  "apiVersion": "kubelet.config.k8s.io/v1beta1",
  "kind": "KubeletConfiguration",
  "failCgroupV1": false,
  "cgroupDriver": "cgroupfs",
  "cgroupRoot": %q,
  "cgroupsPerQOS": true,
  "enforceNodeAllocatable": ["pods"],
  "failSwapOn": false,
  "containerRuntimeEndpoint": %q,
  "protectKernelDefaults": false,
  "makeIPTablesUtilChains": false,
  "podCIDR": %q,
  "maxPods": 100,
  "resolvConf": %q,
  "clusterDNS": [%q],
  "clusterDomain": "cluster.local",
  "podLogsDir": %q,
  "address": %q,
  "port": 10250,
  "readOnlyPort": 0,
  "healthzBindAddress": "127.0.0.1",
  "healthzPort": 10248,
  "tlsCertFile": %q,
  "tlsPrivateKeyFile": %q,
  "authentication": {"anonymous": {"enabled": false}, "webhook": {"enabled": true}, "x509": {"clientCAFile": %q}},
  "authorization": {"mode": "Webhook"},
  "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%%", "imagefs.available": "1%%", "nodefs.inodesFree": "1%%"},
  "imageGCHighThresholdPercent": 100,
  "imageGCLowThresholdPercent": 99,
  "serializeImagePulls": false
}
`, cgroupRoot, "unix://"+p.containerdSock, podCIDR.String(), p.resolvConf, dnsIP.String(), p.podLogs,
		nodeIP.String(), certFile, keyFile, caFile)
}

// kubeProxyConfig runs kube-proxy in nftables mode (IPVS is not in this
// kernel). conntrack.maxPerCore 0 leaves nf_conntrack_max alone: it is a
// global sysctl, and writing it fails here anyway.
func kubeProxyConfig(kubeconfig, nodeName string, podCIDR netip.Prefix) string {
	return fmt.Sprintf(`{
  "apiVersion": "kubeproxy.config.k8s.io/v1alpha1",
  "kind": "KubeProxyConfiguration",
  "mode": "nftables",
  "clientConnection": {"kubeconfig": %q},
  "hostnameOverride": %q,
  "clusterCIDR": %q,
  "conntrack": {"maxPerCore": 0, "min": 0},
  "healthzBindAddress": "127.0.0.1:10256",
  "metricsBindAddress": "127.0.0.1:10249"
}
`, kubeconfig, nodeName, podCIDR.String())
}

// corefile serves cluster.local from the API (the kubernetes plugin) on the
// node's address, and nothing else: no forward plugin, so no name is ever
// resolved outside the machine.
func corefile(kubeconfig string, nodeIP netip.Addr) string {
	return fmt.Sprintf(`.:53 {
    bind %s
    errors
    health 127.0.0.1:8080
    ready 127.0.0.1:8181
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig %s e2e
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
    }
    cache 5
}
`, nodeIP, kubeconfig)
}
