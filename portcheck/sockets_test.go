package portcheck

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/internal/loopback"
)

// Real-socket fixtures. Everything binds to loopback on port 0 and dials
// only loopback.

// openPort starts an accept-and-close listener on ip:0 (ip is 127.0.0.x) and
// returns its port. It stops at the end of the test or benchmark.
func openPort(tb testing.TB, ip string) int32 {
	tb.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	require.NoError(tb, err)
	loopback.Serve(tb, ln)
	return int32(ln.Addr().(*net.TCPAddr).Port)
}

// closedPort returns a loopback port that refuses connections: listen, then
// close.
func closedPort(tb testing.TB) int32 {
	tb.Helper()
	port, err := loopback.Refusing("127.0.0.1")
	require.NoError(tb, err)
	return port
}

// hangingPort returns a loopback port whose connects hang until their
// timeout: a listener with backlog 0 that never accepts, its accept queue
// filled with held connections. On Linux backlog 0 admits one connection;
// the loop fills however many this kernel admits and stops at the first
// connect that times out, which proves the next one hangs too.
func hangingPort(tb testing.TB) int32 {
	tb.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = syscall.Close(fd) })
	require.NoError(tb, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	require.NoError(tb, syscall.Listen(fd, 0))
	sa, err := syscall.Getsockname(fd)
	require.NoError(tb, err)
	port := sa.(*syscall.SockaddrInet4).Port
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	held := 0
	for range 16 {
		c, err := net.DialTimeout("tcp", addr, 50*time.Millisecond)
		if err != nil {
			var ne net.Error
			require.True(tb, errors.As(err, &ne) && ne.Timeout(), "filling backlog: %v", err)
			if held > 0 { // a timeout before any held connection is only load
				return int32(port)
			}
			continue
		}
		held++
		tb.Cleanup(func() { _ = c.Close() })
	}
	tb.Fatalf("backlog of %s never filled", addr)
	return 0
}

// timeWait counts sockets in TIME-WAIT (state 06 in /proc/net/tcp) whose
// local or remote port is in ports.
func timeWait(tb testing.TB, ports map[int32]bool) int {
	tb.Helper()
	f, err := os.Open("/proc/net/tcp")
	require.NoError(tb, err)
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 4 || fs[3] != "06" {
			continue
		}
		for _, a := range fs[1:3] { // local, remote as HEXIP:HEXPORT
			_, hexPort, _ := strings.Cut(a, ":")
			p, err := strconv.ParseUint(hexPort, 16, 16)
			if err == nil && ports[int32(p)] {
				n++
				break
			}
		}
	}
	require.NoError(tb, sc.Err())
	return n
}

// Fakes for tests where ordering, not the socket, is the point.

// fakeConn is what a fake dial returns; the verifier only closes it.
type fakeConn struct{ net.Conn }

func (fakeConn) Close() error { return nil }

var errRefused = &net.OpError{Op: "dial", Net: "tcp",
	Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}

// step is one scripted dial: it waits for gate (if any) or the dial's
// context, then answers err (nil means connected).
type step struct {
	gate chan struct{}
	err  error
}

// script returns a Dial that plays steps in order, one per call.
func script(steps ...step) func(context.Context, string, string) (net.Conn, error) {
	ch := make(chan step, len(steps))
	for _, s := range steps {
		ch <- s
	}
	return func(ctx context.Context, _, _ string) (net.Conn, error) {
		var s step
		select {
		case s = <-ch:
		default:
			return nil, errors.New("script exhausted")
		}
		if s.gate != nil {
			select {
			case <-s.gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if s.err != nil {
			return nil, s.err
		}
		return fakeConn{}, nil
	}
}

// newTest is New for tests, whose listeners are on loopback: unless cfg
// says otherwise, 127.0.0.0/8 is allowed and loopback may be dialed.
func newTest(cfg Config) *Verifier {
	if cfg.Allow == nil {
		cfg.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		cfg.AllowLoopback = true
	}
	return New(cfg)
}

// start runs v until the test ends; the returned stop cancels and waits.
func start(tb testing.TB, v *Verifier) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); v.Run(ctx) }()
	stop = func() { cancel(); <-done }
	tb.Cleanup(stop)
	return stop
}
