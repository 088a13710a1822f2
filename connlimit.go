package main

import (
	"container/list"
	"net"
	"net/http"
	"runtime"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// limitConns makes srv hold at most max connections of ln: it returns the
// listener srv must serve and sets srv.ConnState (calling the one set
// before), through which it learns which connections are between
// requests. max must be at least 1. m counts what it does; its nil fields
// count nothing.
//
// A connection accepted while max are open takes the slot of the one that
// has waited longest without a request in progress: idle since its last
// answer (the reuse nginx makes of kept-alive connections when it runs
// out), or still sending its first request's headers. Neither loses an
// answer: net/http's Transport (Traefik's, Metacontroller's, Prometheus')
// resends a GET on a kept-alive connection the server closed, and a header
// block that has not ended has had no answer to lose. Longest first keeps
// a busy client's connection, idle for a moment between two requests, and
// takes a flood's, idle or unfinished since it opened. Before taking one,
// Accept lets the connections already accepted run, so that a request that
// has arrived is read, and then never cut, before its connection can lose
// its slot; only connections coming faster than the process reads them can
// take the slot of one whose request has arrived unread (one in 18,000
// under the flood of docs/performance.md, "Connections per port"). A
// connection whose request a handler is serving is never closed. When
// every slot serves a request, Accept waits for one to end and the
// kernel's backlog holds the connections behind it: a client's request
// waits in the queue instead of being refused. Refusing at once would be
// the unkind choice for Traefik: its Transport does not retry on a fresh
// connection, so every refusal would reach a visitor as a 502.
func limitConns(srv *http.Server, ln net.Listener, max int, m connCounters) net.Listener {
	if max < 1 {
		panic("limitConns: max must be at least 1")
	}
	l := &connLimit{Listener: ln, max: max, m: m, freed: make(chan struct{}, 1), done: make(chan struct{})}
	prev := srv.ConnState
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		l.connState(c, s)
		if prev != nil {
			prev(c, s)
		}
	}
	return l
}

// connLimit is limitConns' listener. Its mutex guards open, waiting and
// every limitedConn's elem.
type connLimit struct {
	net.Listener
	max       int
	m         connCounters
	mu        sync.Mutex
	open      int
	waiting   list.List     // *limitedConn without a request in progress, longest waiting first
	freed     chan struct{} // a slot freed or a connection turned reclaimable (capacity 1)
	done      chan struct{} // closed by Close
	closeOnce sync.Once
}

// limitedConn is a connection holding one slot until its first Close.
type limitedConn struct {
	net.Conn
	l     *connLimit
	elem  *list.Element // in l.waiting, or nil while a request is served
	close sync.Once
}

// Accept waits for a connection, then for a slot for it (reclaiming one if
// it can); it returns net.ErrClosed once the listener is closed.
func (l *connLimit) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if err := l.admit(); err != nil {
		c.Close()
		return nil, err
	}
	lc := &limitedConn{Conn: c, l: l}
	l.mu.Lock()
	lc.wait()
	l.mu.Unlock()
	return lc, nil
}

// Close closes the listener and ends an Accept waiting for a slot; the
// connections it accepted stay open (http.Server closes them).
func (l *connLimit) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// admit takes a slot: a free one, else that of the connection waiting
// longest without a request in progress, else it waits until one exists.
func (l *connLimit) admit() error {
	yielded := false
	for {
		l.mu.Lock()
		if l.open < l.max {
			l.open++
			l.mu.Unlock()
			l.m.add(1)
			return nil
		}
		if !yielded {
			// Connections accepted in a burst may not have run yet (with
			// GOMAXPROCS=1 this loop can accept thousands first): let them
			// read the requests they were sent before one is reclaimed.
			l.mu.Unlock()
			runtime.Gosched()
			yielded = true
			continue
		}
		var victim *limitedConn
		if e := l.waiting.Front(); e != nil {
			victim = e.Value.(*limitedConn)
			victim.leave()
		}
		l.mu.Unlock()
		if victim != nil {
			victim.Close() // frees its slot; the loop takes it
			if l.m.reclaimed != nil {
				l.m.reclaimed.Inc()
			}
			continue
		}
		select {
		case <-l.freed:
		case <-l.done:
			return net.ErrClosed
		}
	}
}

// connState follows net/http's view of each connection: between requests
// (StateIdle) it may be reclaimed, while a request is served (StateActive)
// it may not. A TLS server reports the *tls.Conn around ours.
func (l *connLimit) connState(c net.Conn, s http.ConnState) {
	lc := unwrapLimited(c)
	if lc == nil || lc.l != l {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch s {
	case http.StateActive:
		lc.leave()
	case http.StateIdle:
		lc.leave()
		lc.wait()
		l.signal()
	}
}

// signal wakes an Accept waiting for a slot; it never blocks.
func (l *connLimit) signal() {
	select {
	case l.freed <- struct{}{}:
	default:
	}
}

// unwrapLimited finds the limitedConn under c (itself, or under a
// *tls.Conn), or nil.
func unwrapLimited(c net.Conn) *limitedConn {
	for c != nil {
		if lc, ok := c.(*limitedConn); ok {
			return lc
		}
		u, ok := c.(interface{ NetConn() net.Conn })
		if !ok {
			return nil
		}
		c = u.NetConn()
	}
	return nil
}

// wait puts c at the back of l.waiting; l.mu must be held.
func (c *limitedConn) wait() {
	c.elem = c.l.waiting.PushBack(c)
}

// leave takes c out of l.waiting, if it is there; l.mu must be held.
func (c *limitedConn) leave() {
	if c.elem != nil {
		c.l.waiting.Remove(c.elem)
		c.elem = nil
	}
}

// Close closes the connection and frees its slot, once.
func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.close.Do(func() {
		c.l.mu.Lock()
		c.leave()
		c.l.open--
		c.l.mu.Unlock()
		c.l.m.add(-1)
		c.l.signal()
	})
	return err
}

// connCounters are one listener's series: its open connections, and those
// closed to give their slot to a newer one.
type connCounters struct {
	open      prometheus.Gauge
	reclaimed prometheus.Counter
}

func (m connCounters) add(n float64) {
	if m.open != nil {
		m.open.Add(n)
	}
}

// newConnMetrics registers the connection series with reg and returns
// those of each server by name.
func newConnMetrics(reg prometheus.Registerer) func(server string) connCounters {
	open := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "stackdome", Name: "http_connections",
		Help: "Connections a listener holds, by server (hooks, errorPages, metrics, pprof); never more than its cap.",
	}, []string{"server"})
	reclaimed := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "stackdome", Name: "http_connections_reclaimed_total",
		Help: "Connections closed at a listener's cap to give their slot to a newer one: the one waiting longest without a request in progress, idle or still sending its first headers.",
	}, []string{"server"})
	reg.MustRegister(open, reclaimed)
	return func(server string) connCounters {
		return connCounters{open.WithLabelValues(server), reclaimed.WithLabelValues(server)}
	}
}
