package main

import (
	"container/list"
	"net"
	"net/http"
	"sync"
)

// limitConns makes srv hold at most max connections of ln: it returns the
// listener srv must serve and sets srv.ConnState, through which it learns
// which connections are between requests. max must be at least 1.
//
// A connection accepted while max are open takes the slot of the one that
// has waited longest without a request in progress: idle keep-alive
// connections first (the reuse nginx makes of them when it runs out),
// then connections still sending their first request's headers. Neither
// loses an answer: net/http's Transport (Traefik's, Metacontroller's,
// Prometheus') resends a GET on a kept-alive connection the server closed,
// and a header block that has not ended has had no answer to lose. A
// connection whose request a handler is serving is never closed. When
// every slot serves a request, Accept waits for one to end and the kernel's
// backlog holds the connections behind it: a client's request waits in
// the queue instead of being refused. Refusing at once would be the
// unkind choice for Traefik: its Transport does not retry on a fresh
// connection, so every refusal would reach a visitor as a 502.
func limitConns(srv *http.Server, ln net.Listener, max int) net.Listener {
	if max < 1 {
		panic("limitConns: max must be at least 1")
	}
	l := &connLimit{Listener: ln, max: max, freed: make(chan struct{}, 1), done: make(chan struct{})}
	prev := srv.ConnState
	srv.ConnState = func(c net.Conn, s http.ConnState) {
		l.connState(c, s)
		if prev != nil {
			prev(c, s)
		}
	}
	return l
}

// connLimit is limitConns' listener. Its mutex guards open, idle, fresh
// and every limitedConn's elem and list.
type connLimit struct {
	net.Listener
	max       int
	mu        sync.Mutex
	open      int
	idle      list.List     // *limitedConn between two requests, longest waiting first
	fresh     list.List     // *limitedConn before its first request, oldest first
	freed     chan struct{} // a slot freed or a connection turned reclaimable (capacity 1)
	done      chan struct{} // closed by Close
	closeOnce sync.Once
}

// limitedConn is a connection holding one slot until its first Close.
type limitedConn struct {
	net.Conn
	l     *connLimit
	elem  *list.Element // in l.idle or l.fresh, or nil while a request is served
	in    *list.List
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
	lc.wait(&l.fresh)
	l.mu.Unlock()
	return lc, nil
}

// Close closes the listener and ends an Accept waiting for a slot; the
// connections it accepted stay open (http.Server closes them).
func (l *connLimit) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// admit takes a slot: a free one, else the one of the longest-waiting idle
// connection, else of the oldest connection still before its first
// request, else it waits until one of those exists.
func (l *connLimit) admit() error {
	for {
		l.mu.Lock()
		if l.open < l.max {
			l.open++
			l.mu.Unlock()
			return nil
		}
		var victim *limitedConn
		for _, q := range []*list.List{&l.idle, &l.fresh} {
			if e := q.Front(); e != nil {
				victim = e.Value.(*limitedConn)
				victim.leave()
				break
			}
		}
		l.mu.Unlock()
		if victim != nil {
			victim.Close() // frees its slot; the loop takes it
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
		lc.wait(&l.idle)
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

// wait puts c at the back of q; l.mu must be held.
func (c *limitedConn) wait(q *list.List) {
	c.elem, c.in = q.PushBack(c), q
}

// leave takes c out of the list it waits in, if any; l.mu must be held.
func (c *limitedConn) leave() {
	if c.elem != nil {
		c.in.Remove(c.elem)
		c.elem, c.in = nil, nil
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
		c.l.signal()
	})
	return err
}
