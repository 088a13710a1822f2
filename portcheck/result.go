package portcheck

import (
	"strconv"
	"strings"
	"time"
)

// State is the verdict on one declared port.
type State string

const (
	// Open means a TCP connect completed: a socket is in LISTEN on the port.
	// It proves no more than that; the app may still not serve.
	Open State = "Open"
	// Closed means the connect was refused (ECONNREFUSED): nothing listens.
	// It is the only verdict that proves a port dead. A NetworkPolicy that
	// rejects with a TCP reset looks the same, which is why callers give a
	// Closed verdict a grace window before acting on it.
	Closed State = "Closed"
	// Inconclusive means anything else: timeout, unreachable, reset, a pod IP
	// outside the allow list, or a malformed target. It never condemns a port.
	Inconclusive State = "Inconclusive"
)

// PortResult is the verdict on one declared port of one dial.
type PortResult struct {
	Name    string        // the declared port name, may be empty
	Port    int32         // the declared port number
	State   State         // Open, Closed or Inconclusive
	Err     string        // the dial error text, or why it was not dialed; empty when Open
	Latency time.Duration // time the connect took; zero when not dialed
}

// Result is the outcome of one Job: one PortResult per declared port, in the
// order the Job declared them.
//
// A Result returned by Verifier.Get shares its Ports slice with the
// verifier's cache: treat it as read-only. The verifier never modifies a
// slice once stored, so reading it needs no lock.
type Result struct {
	IP        string       // the pod IP the Job named
	Ports     []PortResult // one per declared port, in declared order
	CheckedAt time.Time    // when the dials started
	Stale     bool         // set by Get: the Result is at least Config.Recheck old
}

// AllOpen reports whether every declared port is Open. A Result with no
// ports is vacuously all open.
func (r Result) AllOpen() bool {
	for _, p := range r.Ports {
		if p.State != Open {
			return false
		}
	}
	return true
}

// ClosedPorts returns the ports proven closed, in declared order, or nil.
// The returned slice is new; the PortResults are copies.
func (r Result) ClosedPorts() []PortResult {
	var out []PortResult
	for _, p := range r.Ports {
		if p.State == Closed {
			out = append(out, p)
		}
	}
	return out
}

// Message describes the Result in one line for a status message. If any port
// is Closed it names exactly the closed ports ("port 9090 (metrics) refused
// connection"); otherwise, if any is Inconclusive, it names those with their
// reasons; otherwise it names the open ports. It is deterministic: the same
// Result gives the same bytes.
func (r Result) Message() string {
	if closed := r.ClosedPorts(); len(closed) > 0 {
		return listPorts(closed) + " refused connection"
	}
	var b strings.Builder
	for _, p := range r.Ports {
		if p.State != Inconclusive {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString("port ")
		writePort(&b, p)
		b.WriteString(" inconclusive: ")
		b.WriteString(p.Err)
	}
	if b.Len() > 0 {
		return b.String()
	}
	if len(r.Ports) == 0 {
		return "no ports declared"
	}
	return listPorts(r.Ports) + " open"
}

// listPorts renders "port 80 (http)" or "ports 80 (http), 9090 (metrics)".
func listPorts(ps []PortResult) string {
	var b strings.Builder
	if len(ps) == 1 {
		b.WriteString("port ")
	} else {
		b.WriteString("ports ")
	}
	for i, p := range ps {
		if i > 0 {
			b.WriteString(", ")
		}
		writePort(&b, p)
	}
	return b.String()
}

func writePort(b *strings.Builder, p PortResult) {
	b.WriteString(strconv.Itoa(int(p.Port)))
	if p.Name != "" {
		b.WriteString(" (")
		b.WriteString(p.Name)
		b.WriteString(")")
	}
}
