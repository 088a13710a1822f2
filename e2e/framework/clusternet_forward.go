//go:build e2e

package framework

import (
	"context"
	"net"
	"time"
)

// Ports forwarded into the test host's network namespace: the API server's,
// and a Service's as kube-proxy would reach it.

// forwardAPIIn listens inside netns at addr (the kubernetes Service's
// ClusterIP:443) and forwards every connection, TLS untouched, to the API
// server at apiAddr: what kube-proxy does for the kubernetes Service.
func forwardAPIIn(netns, addr, apiAddr string) (stop func(), err error) {
	return forwardIn(netns, addr, func(context.Context) (string, error) { return apiAddr, nil })
}

// forwardIn listens at addr, inside netns ("": the root namespace), and
// forwards every connection, bytes untouched, to the address to gives for
// it: kube-proxy's job for one Service port.
func forwardIn(netns, addr string, to func(context.Context) (string, error)) (stop func(), err error) {
	var l net.Listener
	if netns == "" {
		l, err = net.Listen("tcp", addr)
	} else {
		l, err = listenIn(netns, addr)
	}
	if err != nil {
		return nil, err
	}
	forward(l, func(ctx context.Context) (net.Conn, error) {
		target, err := to(ctx)
		if err != nil {
			return nil, err
		}
		return net.DialTimeout("tcp", target, 5*time.Second)
	})
	return func() { l.Close() }, nil
}

// ForwardService is kube-proxy for one port of Service ns/name: it listens
// at addr, on the test host h (nil: in the root namespace, where a load
// balancer's address is), and forwards each connection to one ready
// endpoint of the Service's EndpointSlices, round robin. stop closes the
// listener.
func (n *clusterNet) ForwardService(h *TestHost, addr, ns, name string, port int) (stop func(), err error) {
	netns := ""
	if h != nil {
		netns = h.netns
	}
	return forwardIn(netns, addr, func(ctx context.Context) (string, error) {
		to, _, err := n.resolve(ctx, name+"."+ns, port)
		return to, err
	})
}
