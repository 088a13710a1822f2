package portcheck

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/stretchr/testify/require"
)

// checkOnce runs one job through a fresh verifier and returns its Result
// and the addresses Dial was asked for.
func checkOnce(t *testing.T, cfg Config, j Job) (Result, []string) {
	t.Helper()
	v := New(cfg)
	var mu sync.Mutex
	var dialed []string
	v.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialed = append(dialed, addr)
		mu.Unlock()
		return defaultDial(ctx, network, addr)
	}
	landed := make(chan Key, 1)
	v.landed = func(k Key) { landed <- k }
	stop := start(t, v)
	require.True(t, v.Enqueue(j))
	require.Equal(t, j.Key, <-landed)
	got, ok := v.Get(j.Key)
	require.True(t, ok)
	stop()
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(dialed)
	return got, dialed
}

// TestDialRealSockets dials an open, a closed and a hanging loopback port
// and checks each verdict, that the hang costs exactly the dial timeout
// and no more, and that an undeclared open port is never dialed.
func TestDialRealSockets(t *testing.T) {
	const timeout = 150 * time.Millisecond
	open, closed, hanging := openPort(t, "127.0.0.1"), closedPort(t), hangingPort(t)
	undeclared := openPort(t, "127.0.0.1")
	_ = undeclared // listening, but not in the Job: must not be dialed

	k := Key{"ns", "app", "rev1"}
	got, dialed := checkOnce(t, Config{DialTimeout: timeout}, Job{Key: k, IP: "127.0.0.1",
		Ports: []Port{{"http", open}, {"metrics", closed}, {"grpc", hanging}}})

	errWant := map[int32]string{open: "", closed: "connection refused", hanging: "i/o timeout"}
	for _, p := range got.Ports {
		if errWant[p.Port] == "" {
			require.Empty(t, p.Err, "port %d", p.Port)
		} else {
			require.Contains(t, p.Err, errWant[p.Port], "port %d", p.Port)
		}
	}
	hang := got.Ports[2].Latency
	require.GreaterOrEqual(t, hang, timeout, "a hanging port answers at its timeout")
	require.Less(t, hang, timeout+time.Second, "and not much later")

	want := Result{IP: "127.0.0.1", Ports: []PortResult{
		{Name: "http", Port: open, State: Open},
		{Name: "metrics", Port: closed, State: Closed},
		{Name: "grpc", Port: hanging, State: Inconclusive},
	}}
	if d := cmp.Diff(want, got, cmpopts.IgnoreFields(PortResult{}, "Err", "Latency"),
		cmpopts.IgnoreFields(Result{}, "CheckedAt")); d != "" {
		t.Errorf("Result (-want +got):\n%s", d)
	}
	wantDialed := []string{}
	for _, p := range []int32{open, closed, hanging} {
		wantDialed = append(wantDialed, net.JoinHostPort("127.0.0.1", strconv.Itoa(int(p))))
	}
	slices.Sort(wantDialed)
	if d := cmp.Diff(wantDialed, dialed); d != "" {
		t.Errorf("dialed addresses (-want +got):\n%s", d)
	}
	require.Equal(t, "port "+strconv.Itoa(int(closed))+" (metrics) refused connection", got.Message())
}

// TestDialNeverLeavesAllowList: a target the verifier must not dial gets an
// Inconclusive verdict saying why, and Dial is never called.
func TestDialNeverLeavesAllowList(t *testing.T) {
	allow := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	open := openPort(t, "127.0.0.1") // would answer Open if it were dialed
	tests := map[string]struct {
		ip      string
		port    int32
		wantErr string
	}{
		"loopback outside allow": {"127.0.0.1", open, "not dialed: pod IP 127.0.0.1 is outside --dial-allow"},
		"IPv6 outside allow":     {"::1", open, "not dialed: pod IP ::1 is outside --dial-allow"},
		"garbage IP":             {"not-an-ip", open, `not dialed: invalid pod IP "not-an-ip"`},
		"hostname":               {"localhost", open, `not dialed: invalid pod IP "localhost"`},
		"unspecified":            {"0.0.0.0", open, "not dialed: 0.0.0.0 is not a unicast pod IP"},
		"broadcast":              {"255.255.255.255", open, "not dialed: 255.255.255.255 is not a unicast pod IP"},
		"port zero inside allow": {"10.1.2.3", 0, "not dialed: invalid port 0"},
		"port too big":           {"10.1.2.3", 70000, "not dialed: invalid port 70000"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			k := Key{"ns", "app", "r"}
			got, dialed := checkOnce(t, Config{Allow: allow}, Job{Key: k, IP: tc.ip, Ports: []Port{{"http", tc.port}}})
			want := []PortResult{{Name: "http", Port: tc.port, State: Inconclusive, Err: tc.wantErr}}
			if d := cmp.Diff(want, got.Ports); d != "" {
				t.Errorf("Ports (-want +got):\n%s", d)
			}
			require.Empty(t, dialed, "nothing may be dialed")
		})
	}
}

// TestDialLeavesNoTimeWait: many checks of a real listener leave no socket
// in TIME-WAIT, because every successful connect is closed with SO_LINGER 0.
func TestDialLeavesNoTimeWait(t *testing.T) {
	port := openPort(t, "127.0.0.1")
	v := New(Config{Workers: 4})
	landed := make(chan Key, 200)
	v.landed = func(k Key) { landed <- k }
	start(t, v)
	const n = 200
	for i := range n {
		require.True(t, v.Enqueue(Job{Key: Key{"ns", strconv.Itoa(i), "r"}, IP: "127.0.0.1", Ports: []Port{{"http", port}}}))
	}
	for range n {
		k := <-landed
		r, ok := v.Get(k)
		require.True(t, ok)
		require.True(t, r.AllOpen(), r.Message())
	}
	require.Zero(t, timeWait(t, map[int32]bool{port: true}), "TIME-WAIT sockets left")
}
