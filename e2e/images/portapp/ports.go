package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"sync"
)

// ports are the app's TCP ports, each open (listening and serving the app's
// HTTP handler) or closed (connections refused). It is safe for concurrent
// use; it starts no goroutine but one http.Server.Serve a listener.
type ports struct {
	listen  func(port int) (net.Listener, error)
	handler func(port int) http.Handler

	mu      sync.Mutex
	open    map[int]*openPort
	known   map[int]bool // configured or ever opened: what state reports
	stopped bool         // after SIGTERM closed them: nothing opens again
}

type openPort struct {
	srv *http.Server
	l   net.Listener
}

// close closes the listener itself too: srv.Close closes only listeners
// Serve has begun on, and Serve runs in its own goroutine.
func (o *openPort) close() {
	o.srv.Close()
	o.l.Close()
}

var errStopped = errors.New("the app is terminating: ports no longer open")

func newPorts(listen func(int) (net.Listener, error), handler func(int) http.Handler) *ports {
	return &ports{listen: listen, handler: handler, open: map[int]*openPort{}, known: map[int]bool{}}
}

// add records a configured port, closed until opened.
func (p *ports) add(port int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.known[port] = true
}

// Open starts listening on port; opening an open port does nothing.
func (p *ports) Open(port int) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return errStopped
	}
	p.known[port] = true
	if _, ok := p.open[port]; ok {
		return nil
	}
	l, err := p.listen(port)
	if err != nil {
		return fmt.Errorf("opening port %d: %w", port, err)
	}
	srv := &http.Server{Handler: p.handler(port)}
	p.open[port] = &openPort{srv: srv, l: l}
	go srv.Serve(l) // returns ErrServerClosed once Close closes l
	return nil
}

// Close stops listening on port and drops its connections; closing a
// closed port does nothing.
func (p *ports) Close(port int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if o, ok := p.open[port]; ok {
		o.close()
		delete(p.open, port)
	}
}

// Stop closes every port and keeps them closed.
func (p *ports) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stopped = true
	for port, o := range p.open {
		o.close()
		delete(p.open, port)
	}
}

// State maps every known port to "open" or "closed".
func (p *ports) State() map[int]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := map[int]string{}
	for port := range p.known {
		s[port] = "closed"
		if _, ok := p.open[port]; ok {
			s[port] = "open"
		}
	}
	return s
}

// sortedKeys returns m's ports in order.
func sortedKeys(m map[int]string) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
