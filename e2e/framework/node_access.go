//go:build e2e

package framework

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// What a test reaches the node through: its name and address, a dialer
// inside its network, its images.

// Name is the node's name.
func (n *Node) Name() string { return n.name }

// IP is the node's address (InternalIP).
func (n *Node) IP() netip.Addr { return n.nodeIP }

// Procs are the node's processes, for their memory (/proc/<pid>/status).
func (n *Node) Procs() []*Proc { return n.procs }

// DialContext connects from inside the node's network namespace, as a
// process on the node would: pod addresses, ClusterIPs and NodePorts answer
// there (kube-proxy's rules are the node's).
func (n *Node) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := inNetns(n.cfg.Host.netns, func() (err error) {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	return c, err
}

// HTTPClient is an HTTP client whose connections are made by DialContext.
func (n *Node) HTTPClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: n.DialContext, Proxy: nil, DisableKeepAlives: true}}
}

// Import loads an OCI image layout tar (or docker save archive) into the
// node's containerd, where the kubelet finds it (namespace k8s.io), for this
// machine's platform.
func (n *Node) Import(ctx context.Context, archive string) error {
	if _, err := n.ctr(ctx, "-n", "k8s.io", "images", "import", archive); err != nil {
		return fmt.Errorf("importing %s: %w", archive, err)
	}
	return nil
}

// Tag gives the node's image src the name dst as well (each normalized as
// the kubelet looks it up): what a push of src to dst's registry and a pull
// of dst would leave in containerd.
func (n *Node) Tag(ctx context.Context, src, dst string) error {
	if _, err := n.ctr(ctx, "-n", "k8s.io", "images", "tag", "--force", NormalizeImage(src), NormalizeImage(dst)); err != nil {
		return fmt.Errorf("tagging %s as %s: %w", src, dst, err)
	}
	return nil
}

// KillContainer sends SIGKILL to a container's process (containerID as a
// pod's status gives it, containerd://<id>), as `kill -9` or the OOM killer
// would: the kubelet sees it exit and restarts it as the pod's
// restartPolicy says.
func (n *Node) KillContainer(ctx context.Context, containerID string) error {
	id, ok := strings.CutPrefix(containerID, "containerd://")
	if !ok || id == "" {
		return fmt.Errorf("container ID %q is not containerd's", containerID)
	}
	if _, err := n.ctr(ctx, "-n", "k8s.io", "tasks", "kill", "--signal", "SIGKILL", id); err != nil {
		return fmt.Errorf("kill -9 of container %s: %w", id, err)
	}
	return nil
}

// ForgetConnections deletes the node's conntrack entries of connections
// to ip: from then on their packets are judged as new ones, so a
// NetworkPolicy changed since they were opened applies to them too (the
// policy engine admits established connections without asking). Both
// kinds: those opened to ip itself (original destination ip), and those
// opened to a Service that kube-proxy translated to ip (original
// destination the ClusterIP, reply source ip), which is how Metacontroller
// reaches the hooks.
func (n *Node) ForgetConnections(ctx context.Context, ip string) error {
	for _, match := range []string{"--orig-dst", "--reply-src"} {
		_, err := output(ctx, "nsenter", "--net="+n.cfg.Host.netns, "--", "conntrack", "-D", match, ip)
		if err != nil && !strings.Contains(err.Error(), "0 flow entries have been deleted") {
			return fmt.Errorf("forgetting the connections to %s (%s): %w", ip, match, err)
		}
	}
	return nil
}

// Images are the references of the images the node's containerd has.
func (n *Node) Images(ctx context.Context) ([]string, error) {
	out, err := n.ctr(ctx, "-n", "k8s.io", "images", "list", "-q")
	if err != nil {
		return nil, err
	}
	return strings.Fields(out), nil
}

// ctr runs containerd's ctr against the node's containerd, in the node's
// namespaces (an import unpacks layers into the node's snapshotter).
func (n *Node) ctr(ctx context.Context, args ...string) (string, error) {
	argv := append([]string{"nsenter", "--mount=" + mountNS(n.mountns), "--net=" + n.cfg.Host.netns, "--", "ctr", "--address", n.paths.containerdSock}, args...)
	return output(ctx, argv...)
}

// Publish listens on addr, a loopback address of the machine, and forwards
// each connection to target() (read per connection) dialed inside the node:
// what kind's extraPortMappings (docker-proxy) and a cloud's load balancer
// do for a node port. Closing the listener stops it; connections under way
// end with their peers.
func (n *Node) Publish(addr string, target func() string) (net.Listener, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("publishing a node port on %s: %w", addr, err)
	}
	forward(l, func(ctx context.Context) (net.Conn, error) { return n.DialContext(ctx, "tcp", target()) })
	return l, nil
}

// forward accepts on l until it is closed and splices each connection with
// one dial makes (within 10 s), both ways, each direction's end passed on,
// until both have ended.
func forward(l net.Listener, dial func(context.Context) (net.Conn, error)) {
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				up, err := dial(ctx)
				cancel()
				if err != nil {
					return
				}
				defer up.Close()
				done := make(chan struct{}, 2)
				pipe := func(dst, src net.Conn) {
					_, _ = io.Copy(dst, src)
					if cw, ok := dst.(interface{ CloseWrite() error }); ok {
						_ = cw.CloseWrite()
					}
					done <- struct{}{}
				}
				go pipe(up, c)
				go pipe(c, up)
				<-done
				<-done
			}()
		}
	}()
}
