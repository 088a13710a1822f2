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
	v := newTest(cfg)
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
// Inconclusive verdict saying why, and Dial is never called. Loopback,
// link-local, the cloud metadata addresses (in every form that reaches
// them: IPv4, IPv6, IPv4-mapped, NAT64) and unspecified addresses are
// refused even under an allow list of everything; an empty allow list
// dials nothing; only Config.AllowLoopback (tests) opens loopback, and only
// inside Allow. On main, 169.254.169.254, ::ffff:169.254.169.254,
// fd00:ec2::254 and loopback were all dialed under an empty or wide list.
func TestDialNeverLeavesAllowList(t *testing.T) {
	everything := []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}
	pods := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	open := openPort(t, "127.0.0.1") // would answer Open if it were dialed
	tests := map[string]struct {
		cfg     Config
		ip      string
		port    int32
		wantErr string
	}{
		"loopback under allow-all":        {Config{Allow: everything}, "127.0.0.1", open, "not dialed: 127.0.0.1 is a loopback address, never a pod IP"},
		"loopback inside allow":           {Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, "127.0.0.1", open, "not dialed: 127.0.0.1 is a loopback address, never a pod IP"},
		"IPv6 loopback":                   {Config{Allow: everything}, "::1", open, "not dialed: ::1 is a loopback address, never a pod IP"},
		"mapped loopback":                 {Config{Allow: everything}, "::ffff:127.0.0.1", open, "not dialed: ::ffff:127.0.0.1 is a loopback address, never a pod IP"},
		"AllowLoopback outside allow":     {Config{Allow: pods, AllowLoopback: true}, "127.0.0.1", open, "not dialed: pod IP 127.0.0.1 is outside the allowed pod CIDRs"},
		"metadata":                        {Config{Allow: everything}, "169.254.169.254", 80, "not dialed: 169.254.169.254 is link-local (the cloud metadata range), never a pod IP"},
		"metadata, IPv4-mapped":           {Config{Allow: everything}, "::ffff:169.254.169.254", 80, "not dialed: ::ffff:169.254.169.254 is link-local (the cloud metadata range), never a pod IP"},
		"metadata, NAT64":                 {Config{Allow: everything}, "64:ff9b::a9fe:a9fe", 80, "not dialed: 64:ff9b::a9fe:a9fe is link-local (the cloud metadata range), never a pod IP"},
		"metadata, AWS IPv6 inside allow": {Config{Allow: pods}, "fd00:ec2::254", 80, "not dialed: fd00:ec2::254 is a cloud metadata address, never a pod IP"},
		"metadata, Azure wire server":     {Config{Allow: everything}, "168.63.129.16", 80, "not dialed: 168.63.129.16 is a cloud metadata address, never a pod IP"},
		"IPv6 link-local":                 {Config{Allow: everything}, "fe80::1", 80, "not dialed: fe80::1 is link-local (the cloud metadata range), never a pod IP"},
		"unspecified":                     {Config{Allow: everything}, "0.0.0.0", open, "not dialed: 0.0.0.0 is not a unicast pod IP"},
		"IPv6 unspecified":                {Config{Allow: everything}, "::", open, "not dialed: :: is not a unicast pod IP"},
		"broadcast":                       {Config{Allow: everything}, "255.255.255.255", open, "not dialed: 255.255.255.255 is not a unicast pod IP"},
		"empty allow list dials nothing":  {Config{}, "10.1.2.3", 80, "not dialed: the allow list of pod CIDRs is empty, so no pod IP may be dialed"},
		"empty allow list, AllowLoopback": {Config{AllowLoopback: true, Allow: []netip.Prefix{}}, "127.0.0.1", open, "not dialed: the allow list of pod CIDRs is empty, so no pod IP may be dialed"},
		"outside allow":                   {Config{Allow: pods}, "192.168.1.1", 80, "not dialed: pod IP 192.168.1.1 is outside the allowed pod CIDRs"},
		"garbage IP":                      {Config{Allow: pods}, "not-an-ip", open, `not dialed: invalid pod IP "not-an-ip"`},
		"hostname":                        {Config{Allow: pods}, "localhost", open, `not dialed: invalid pod IP "localhost"`},
		"port zero inside allow":          {Config{Allow: pods}, "10.1.2.3", 0, "not dialed: invalid port 0"},
		"port too big":                    {Config{Allow: pods}, "10.1.2.3", 70000, "not dialed: invalid port 70000"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			k := Key{"ns", "app", "r"}
			cfg := tc.cfg
			if cfg.Allow == nil {
				cfg.Allow = []netip.Prefix{} // newTest's loopback default is not wanted here
			}
			got, dialed := checkOnce(t, cfg, Job{Key: k, IP: tc.ip, Ports: []Port{{"http", tc.port}}})
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
	v := newTest(Config{Workers: 4})
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
