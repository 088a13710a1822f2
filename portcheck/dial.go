package portcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"syscall"
)

// Port is one declared TCP port of a pod.
type Port struct {
	Name string // the container port's name, may be empty
	Port int32  // 1–65535; anything else is reported Inconclusive, never dialed
}

// lingerer is what a connection must offer to be closed with SO_LINGER 0;
// *net.TCPConn does, and so does anything embedding it.
type lingerer interface{ SetLinger(sec int) error }

// target checks a Job's IP before anything is dialed. It returns the parsed
// address, or the reason it must not be dialed.
func (v *Verifier) target(ip string) (netip.Addr, string) {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return netip.Addr{}, fmt.Sprintf("not dialed: invalid pod IP %q", ip)
	}
	addr = addr.Unmap()
	if addr.Zone() != "" || addr.IsUnspecified() || addr.IsMulticast() || addr == netip.AddrFrom4([4]byte{255, 255, 255, 255}) {
		return netip.Addr{}, fmt.Sprintf("not dialed: %s is not a unicast pod IP", ip)
	}
	if len(v.cfg.Allow) == 0 {
		return addr, ""
	}
	for _, p := range v.cfg.Allow {
		if p.Contains(addr) {
			return addr, ""
		}
	}
	return netip.Addr{}, fmt.Sprintf("not dialed: pod IP %s is outside --dial-allow", ip)
}

// dialAll dials every port of j concurrently and returns one PortResult per
// port in declared order. Each dial first takes a slot of v.slots, so across
// all jobs at most Config.Workers dials (and sockets) are open at once.
// It returns after every dial it started has finished and closed its socket.
func (v *Verifier) dialAll(ctx context.Context, j Job) []PortResult {
	out := make([]PortResult, len(j.Ports))
	addr, why := v.target(j.IP)
	if why != "" {
		for i, p := range j.Ports {
			out[i] = PortResult{Name: p.Name, Port: p.Port, State: Inconclusive, Err: why}
		}
		v.m.undialed.Add(float64(len(j.Ports)))
		return out
	}
	var wg sync.WaitGroup
	inline := -1 // the calling worker dials one port itself: one goroutine less per job
	for i, p := range j.Ports {
		switch {
		case p.Port < 1 || p.Port > 65535:
			out[i] = PortResult{Name: p.Name, Port: p.Port, State: Inconclusive,
				Err: fmt.Sprintf("not dialed: invalid port %d", p.Port)}
			v.m.undialed.Inc()
		case inline < 0:
			inline = i
		default:
			wg.Go(func() { out[i] = v.dialOne(ctx, addr, p) })
		}
	}
	if inline >= 0 {
		out[inline] = v.dialOne(ctx, addr, j.Ports[inline])
	}
	wg.Wait()
	return out
}

// dialOne connects once to addr:p within Config.DialTimeout and closes the
// connection at once with SO_LINGER 0: the close sends RST instead of FIN, so
// no TIME-WAIT socket (and no ephemeral port) outlives the check. This is
// the kubelet's fix for the same problem (kubernetes#115143).
func (v *Verifier) dialOne(ctx context.Context, addr netip.Addr, p Port) PortResult {
	r := PortResult{Name: p.Name, Port: p.Port}
	select {
	case v.slots <- struct{}{}:
	case <-ctx.Done():
		r.State, r.Err = Inconclusive, "not dialed: "+ctx.Err().Error()
		return r
	}
	defer func() { <-v.slots }()
	v.m.inFlight.Inc()
	defer v.m.inFlight.Dec()

	dctx, cancel := context.WithTimeout(ctx, v.cfg.DialTimeout)
	defer cancel()
	start := v.Now()
	conn, err := v.Dial(dctx, "tcp", netip.AddrPortFrom(addr, uint16(p.Port)).String())
	r.Latency = v.Now().Sub(start)
	if conn != nil {
		if l, ok := conn.(lingerer); ok {
			_ = l.SetLinger(0) // best effort: a failure only costs a TIME-WAIT
		}
		_ = conn.Close()
	}
	r.State = classify(err)
	if err != nil {
		r.Err = err.Error()
	}
	v.m.observeDial(r.State, r.Latency)
	return r
}

// classify maps a dial error to a State. Only ECONNREFUSED proves that
// nothing listens; timeouts, unreachable hosts, resets and everything else
// are Inconclusive (see golang/go#45621 for why this is Linux-specific).
func classify(err error) State {
	switch {
	case err == nil:
		return Open
	case errors.Is(err, syscall.ECONNREFUSED):
		return Closed
	default:
		return Inconclusive
	}
}

// defaultDial is (&net.Dialer{}).DialContext; the per-dial deadline comes
// from the context, and SO_LINGER 0 is applied by dialOne after connect.
var defaultDial = (&net.Dialer{}).DialContext
