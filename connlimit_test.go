package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// limitedServer serves h on loopback through limitConns(max, m) and
// returns its address and a channel that receives each time a connection turns idle
// (net/http's ConnState, which limitConns keeps calling); it is closed at
// cleanup. Its own timeouts are a minute: what closes a connection in
// these tests is the limit.
func limitedServer(t *testing.T, max int, h http.Handler, m ...connCounters) (string, <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	idle := make(chan struct{}, 16)
	srv := &http.Server{Handler: h, ReadHeaderTimeout: time.Minute, IdleTimeout: time.Minute,
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateIdle {
				idle <- struct{}{}
			}
		}}
	var counters connCounters
	if len(m) > 0 {
		counters = m[0]
	}
	lim := limitConns(srv, ln, max, counters)
	go srv.Serve(lim)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String(), idle
}

// rawConn is a client connection that writes requests by hand.
type rawConn struct {
	net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return &rawConn{c, bufio.NewReader(c)}
}

// get sends a whole GET and returns the status of its answer.
func (c *rawConn) get(t *testing.T, path string) int {
	t.Helper()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: t\r\n\r\n", path)
	resp, err := http.ReadResponse(c.r, nil)
	require.NoError(t, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// closedByServer reports whether the server has closed c: a read gets EOF
// or a reset; false if it stays open for 10 s (the server's own timeouts
// are a minute).
func (c *rawConn) closedByServer(t *testing.T) bool {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := c.r.ReadByte()
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	return err != nil
}

func okHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
}

// TestLimitConnsReclaimsTheLongestIdle: with two slots held by kept-alive
// connections, a third client is served at once and the connection idle
// the longest is the one closed; the other keeps serving. The server's
// series count two connections and one reclaimed.
func TestLimitConnsReclaimsTheLongestIdle(t *testing.T) {
	m := newConnMetrics(prometheus.NewRegistry())("errorPages")
	addr, idle := limitedServer(t, 2, okHandler(), m)
	a, b := dialRaw(t, addr), dialRaw(t, addr)
	require.Equal(t, 200, a.get(t, "/"))
	<-idle
	require.Equal(t, 200, b.get(t, "/"))
	<-idle
	c := dialRaw(t, addr)
	require.Equal(t, 200, c.get(t, "/"))
	require.True(t, a.closedByServer(t), "the longest-idle connection was not closed")
	require.Equal(t, 200, b.get(t, "/"), "the other kept-alive connection was closed too")
	require.Equal(t, 2.0, testutil.ToFloat64(m.open))
	require.Equal(t, 1.0, testutil.ToFloat64(m.reclaimed))
}

// TestLimitConnsReclaimsAnUnfinishedHeader: a connection whose header
// block never ends gives its slot as an idle one does, the one waiting
// longest first, and a request being served never does.
func TestLimitConnsReclaimsAnUnfinishedHeader(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{}, 1)
	defer close(release)
	addr, turnedIdle := limitedServer(t, 2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			entered <- struct{}{}
			<-release
		}
		io.WriteString(w, "ok")
	}))
	slow := dialRaw(t, addr)
	fmt.Fprintf(slow, "GET / HTTP/1.1\r\nHost: t\r\nX-Pad: ")
	idle := dialRaw(t, addr)
	require.Equal(t, 200, idle.get(t, "/"))
	<-turnedIdle

	held := dialRaw(t, addr)
	fmt.Fprintf(held, "GET /hold HTTP/1.1\r\nHost: t\r\n\r\n")
	<-entered
	require.True(t, slow.closedByServer(t), "the unfinished header, waiting longest, kept its slot")
	require.Equal(t, 200, dialRaw(t, addr).get(t, "/"))
	require.True(t, idle.closedByServer(t), "the idle connection kept its slot")
}

// TestLimitConnsNeverCutsARequest: with the one slot serving a request, the
// next client waits in the backlog instead of being refused or cutting
// that request, and is answered once it ends.
func TestLimitConnsNeverCutsARequest(t *testing.T) {
	release, entered := make(chan struct{}), make(chan struct{}, 2)
	addr, _ := limitedServer(t, 1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		if r.URL.Path == "/slow" {
			<-release
		}
		io.WriteString(w, "ok")
	}))
	a := dialRaw(t, addr)
	fmt.Fprintf(a, "GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
	<-entered
	b := dialRaw(t, addr)
	answered := make(chan int, 1)
	go func() {
		fmt.Fprintf(b, "GET /fast HTTP/1.1\r\nHost: t\r\n\r\n")
		resp, err := http.ReadResponse(b.r, nil)
		if err != nil {
			answered <- -1
			return
		}
		resp.Body.Close()
		answered <- resp.StatusCode
	}()
	select {
	case code := <-answered:
		t.Fatalf("the second client was answered %d while the only slot served a request", code)
	case <-entered:
		t.Fatal("a second handler ran while the only slot served a request")
	case <-time.After(200 * time.Millisecond):
	}
	close(release)
	resp, err := http.ReadResponse(a.r, nil)
	require.NoError(t, err, "the request in progress was cut")
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, 200, <-answered)
}

// TestLimitConnsCloseEndsAWaitingAccept: Shutdown returns although Accept
// waits for a slot.
func TestLimitConnsCloseEndsAWaitingAccept(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	release := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { <-release })}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(limitConns(srv, ln, 1, connCounters{})) }()
	a := dialRaw(t, ln.Addr().String())
	fmt.Fprintf(a, "GET / HTTP/1.1\r\nHost: t\r\n\r\n")
	b := dialRaw(t, ln.Addr().String())
	fmt.Fprintf(b, "GET / HTTP/1.1\r\nHost: t\r\n\r\n")
	srv.Close()
	close(release)
	require.ErrorIs(t, <-served, http.ErrServerClosed)
}
