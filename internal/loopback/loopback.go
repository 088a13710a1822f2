// Package loopback holds the two sockets that tests and benchmarks stand up
// where the socket is the point: a port where something listens (every
// connect accepted and closed at once, as an app that answers) and a port
// where nothing does (every connect refused). Only tests and benchmarks
// import it; the addresses they pass are loopback ones or the test host's
// (docs/e2e.md).
package loopback

import (
	"net"
	"strconv"
	"testing"
)

// AcceptAndClose accepts every connection on ln and closes it at once; it
// returns when ln is closed. Run it in a goroutine of its own.
func AcceptAndClose(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		_ = c.Close()
	}
}

// Serve runs AcceptAndClose on ln until the test or benchmark ends, then
// closes ln and waits for it to return.
func Serve(tb testing.TB, ln net.Listener) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		AcceptAndClose(ln)
	}()
	tb.Cleanup(func() { _ = ln.Close(); <-done })
}

// Refusing returns a port of ip that refuses connections: ip:0 listened on,
// then closed. Nothing holds the port afterwards, so it is also a port free
// to listen on, until something else takes it.
func Refusing(ip string) (int32, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, err
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	p, err := strconv.Atoi(port)
	if err != nil {
		return 0, err
	}
	return int32(p), ln.Close()
}
