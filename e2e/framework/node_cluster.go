//go:build e2e

package framework

import (
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
)

// ClusterOption changes how StartCluster runs the control plane.
type ClusterOption func(*clusterOptions)

// clusterOptions are the differences a real node needs; the zero value is
// a control plane on loopback that no node joins (the ./e2e suite's).
type clusterOptions struct {
	address netip.Addr   // bind and advertise here instead of loopback
	podCIDR netip.Prefix // the first node's spec.podCIDR
}

// ForRealNode makes the control plane a real node can join (node.go): the API
// server binds and advertises address (the root side of the node's veth pair,
// an address that exists only on this machine) instead of loopback, so the
// kubelet, kube-proxy and pods (through the kubernetes Service, whose
// endpoint the API server now publishes) reach it; its serving certificate
// names address; it reaches kubelets with a client certificate (kubectl logs)
// and verifies their serving certificates against the cluster CA; and
// kube-controller-manager allocates each node's spec.podCIDR from
// clusterCIDR (kube-router's policy controller needs it) and runs the node
// lifecycle controller, which a real kubelet's heartbeats satisfy.
//
// The first node gets podCIDR: the cluster CIDR is podCIDR one bit wider, cut
// into node CIDRs of podCIDR's size, handed out lowest first. (A cluster CIDR
// of exactly one node CIDR is refused by kube-controller-manager v1.37.2:
// "there are no remaining CIDRs left to allocate".) podCIDR must be the lower
// half of that wider prefix.
func ForRealNode(address netip.Addr, podCIDR netip.Prefix) ClusterOption {
	return func(o *clusterOptions) {
		o.address = address
		o.podCIDR = podCIDR
	}
}

// apiHost is where the API server listens and clients dial it.
func (o clusterOptions) apiHost() string {
	if o.address.IsValid() {
		return o.address.String()
	}
	return "127.0.0.1"
}

// apiserverArgs are the API server's address flags, and for a real node its
// kubelet client; dir holds the certificates it issues.
func (o clusterOptions) apiserverArgs(dir string, p *pki) ([]string, error) {
	if !o.address.IsValid() {
		return []string{
			"--bind-address=127.0.0.1",
			// With no Endpoints reconciler the API server does not publish its
			// advertise address in the kubernetes Service, which would refuse a
			// loopback address.
			"--advertise-address=127.0.0.1",
			"--endpoint-reconciler-type=none",
		}, nil
	}
	// kubeadm's apiserver-kubelet-client: system:masters passes the
	// kubelet's webhook authorization for logs, exec and port-forward.
	cert, key, err := p.issue(dir, "apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"}, nil)
	if err != nil {
		return nil, err
	}
	return []string{
		"--bind-address=" + o.address.String(),
		"--advertise-address=" + o.address.String(),
		"--kubelet-client-certificate=" + cert,
		"--kubelet-client-key=" + key,
		"--kubelet-certificate-authority=" + p.caFile,
		"--kubelet-preferred-address-types=InternalIP",
	}, nil
}

// controllerManagerArgs are kube-controller-manager's node-related flags.
func (o clusterOptions) controllerManagerArgs() []string {
	if !o.podCIDR.IsValid() {
		return nil // no node joins: nothing to allocate
	}
	return []string{
		"--allocate-node-cidrs",
		"--cluster-cidr=" + netip.PrefixFrom(o.podCIDR.Addr(), o.podCIDR.Bits()-1).Masked().String(),
		"--node-cidr-mask-size=" + fmt.Sprint(o.podCIDR.Bits()),
	}
}

// nodeCredential is a kubeconfig for a node component authenticating with a
// client certificate the cluster CA signs, dialing the API server as pods and
// the node see it.
func (c *Cluster) nodeCredential(dir, name, user string, groups []string) (string, error) {
	cert, key, err := c.pki.issue(dir, name, user, groups, nil)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name+".kubeconfig")
	return path, writeCertKubeconfig(path, c.Kube.Base, c.pki.caFile, cert, key)
}

// nodeServingCert issues the kubelet's serving certificate for ip, which the
// API server verifies (--kubelet-certificate-authority).
func (c *Cluster) nodeServingCert(dir, name string, ip netip.Addr) (cert, key string, err error) {
	return c.pki.issue(dir, name, name, nil, []net.IP{net.IP(ip.AsSlice())})
}
