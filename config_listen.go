package main

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// listener is one server's listen address and the flag that sets it.
type listener struct{ flag, addr string }

// listeners are the addresses c binds, in the order wire binds them: the
// hooks' (or health's) always, the error pages' unless --pages=false, the
// metrics' always, the profiles' when --pprof-listen is set.
func listeners(c *config) []listener {
	ls := []listener{{"--listen", c.listen}}
	if c.servePages {
		ls = append(ls, listener{"--error-pages-listen", c.errorPagesListen})
	}
	ls = append(ls, listener{"--metrics-listen", c.metricsListen})
	if c.pprofListen != "" {
		ls = append(ls, listener{"--pprof-listen", c.pprofListen})
	}
	return ls
}

// checkListeners refuses two servers of c on one port, before anything
// binds: the second bind would fail only once the first has bound, with
// "address already in use", naming neither flag. Addresses overlap on the
// same port when their hosts are equal, when either is a wildcard (empty,
// 0.0.0.0 or ::, every address of the machine; Go listens on both families
// for either) or when one is localhost and the other loopback. Port 0 never
// collides: each bind gets a port of its own. An address that does not
// parse is left to the bind, which names it.
func checkListeners(c *config) error {
	ls := listeners(c)
	for i, a := range ls {
		for _, b := range ls[:i] {
			if overlap(b.addr, a.addr) {
				return fmt.Errorf("%s %q and %s %q: both servers would listen on one port; give each its own", b.flag, b.addr, a.flag, a.addr)
			}
		}
	}
	return nil
}

// overlap reports whether listening on a and on b would take one port.
func overlap(a, b string) bool {
	ha, pa, errA := net.SplitHostPort(a)
	hb, pb, errB := net.SplitHostPort(b)
	if errA != nil || errB != nil || pa != pb || pa == "0" {
		return false
	}
	ia, ib := ipsOf(ha), ipsOf(hb)
	if ia == nil || ib == nil {
		return strings.EqualFold(ha, hb) // host names, unresolved
	}
	for _, x := range ia {
		for _, y := range ib {
			if x == y || x.IsUnspecified() || y.IsUnspecified() {
				return true
			}
		}
	}
	return false
}

// ipsOf is what a listen address's host binds, as far as it can be told
// without resolving it: the unspecified address for a wildcard (empty,
// 0.0.0.0, ::), loopback for localhost (which Go binds to its first
// address), the IP of an IP (IPv4-mapped IPv6 as IPv4); nil for a name.
func ipsOf(h string) []netip.Addr {
	switch {
	case h == "":
		return []netip.Addr{netip.IPv6Unspecified()}
	case strings.EqualFold(h, "localhost"):
		return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.IPv6Loopback()}
	}
	ip, err := netip.ParseAddr(h)
	if err != nil {
		return nil
	}
	return []netip.Addr{ip.Unmap()}
}
