package portcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
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

// metadata are the cloud instance-metadata addresses outside link-local
// (169.254.0.0/16 and fe80::/10 are refused whole): AWS's IPv6 endpoint,
// Azure's wire server and Alibaba Cloud's endpoint. A pod IP is never one.
var metadata = []netip.Addr{
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("168.63.129.16"),
	netip.MustParseAddr("100.100.100.200"),
}

// nat64 is the well-known NAT64 prefix (RFC 6052): 64:ff9b::a9fe:a9fe is
// 169.254.169.254 through a NAT64 gateway, so the embedded IPv4 address is
// checked as itself.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// target checks a Job's IP before anything is dialed. It returns the parsed
// address, or the reason it must not be dialed. Whatever Config.Allow says,
// it refuses what a pod IP never is and a dial must never reach: loopback
// (unless Config.AllowLoopback, for tests), link-local (which holds the
// cloud metadata address 169.254.169.254), the other metadata addresses,
// unspecified, multicast and broadcast addresses, in any IPv4-mapped or
// NAT64 form, and zoned addresses. An empty Allow refuses everything.
func (v *Verifier) target(ip string) (netip.Addr, string) {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return netip.Addr{}, fmt.Sprintf("not dialed: invalid pod IP %q", ip)
	}
	addr = addr.Unmap()
	if nat64.Contains(addr) {
		b := addr.As16()
		if why := v.forbidden(netip.AddrFrom4([4]byte(b[12:])), ip); why != "" {
			return netip.Addr{}, why
		}
	}
	if why := v.forbidden(addr, ip); why != "" {
		return netip.Addr{}, why
	}
	if len(v.cfg.Allow) == 0 {
		return netip.Addr{}, "not dialed: the allow list of pod CIDRs is empty, so no pod IP may be dialed"
	}
	for _, p := range v.cfg.Allow {
		if p.Contains(addr) {
			return addr, ""
		}
	}
	return netip.Addr{}, fmt.Sprintf("not dialed: pod IP %s is outside the allowed pod CIDRs", ip)
}

// forbidden says why addr (unmapped; ip as the Job gave it) is never
// dialed, or "".
func (v *Verifier) forbidden(addr netip.Addr, ip string) string {
	switch {
	case addr.Zone() != "" || addr.IsUnspecified() || addr.IsMulticast() || addr == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return fmt.Sprintf("not dialed: %s is not a unicast pod IP", ip)
	case addr.IsLoopback() && !v.cfg.AllowLoopback:
		return fmt.Sprintf("not dialed: %s is a loopback address, never a pod IP", ip)
	case addr.IsLinkLocalUnicast():
		return fmt.Sprintf("not dialed: %s is link-local (the cloud metadata range), never a pod IP", ip)
	case slices.Contains(metadata, addr):
		return fmt.Sprintf("not dialed: %s is a cloud metadata address, never a pod IP", ip)
	}
	return ""
}

// answer is the verdict on port i of r: Inconclusive without a dial when
// r's IP or the port may not be dialed, else one dial.
func (v *Verifier) answer(ctx context.Context, r *run, i int) PortResult {
	p := r.job.Ports[i]
	switch {
	case r.why != "":
		v.m.undialed.Inc()
		return PortResult{Name: p.Name, Port: p.Port, State: Inconclusive, Err: r.why}
	case p.Port < 1 || p.Port > 65535:
		v.m.undialed.Inc()
		return PortResult{Name: p.Name, Port: p.Port, State: Inconclusive, Err: fmt.Sprintf("not dialed: invalid port %d", p.Port)}
	}
	return v.dialOne(ctx, r.addr, p)
}

// dialOne connects once to addr:p within Config.DialTimeout and closes the
// connection at once with SO_LINGER 0: the close sends RST instead of FIN, so
// no TIME-WAIT socket (and no ephemeral port) outlives the check. This is
// the kubelet's fix for the same problem (kubernetes#115143).
func (v *Verifier) dialOne(ctx context.Context, addr netip.Addr, p Port) PortResult {
	r := PortResult{Name: p.Name, Port: p.Port}
	if err := ctx.Err(); err != nil {
		r.State, r.Err = Inconclusive, "not dialed: "+err.Error()
		return r
	}
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
