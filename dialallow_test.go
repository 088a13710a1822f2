package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/portcheck"
)

// TestServeDialsWhatDialAllowSays: the verifier serve wires fails closed.
// With no --dial-allow it dials nothing — not a pod IP, not loopback, not
// the metadata address — and says so at start-up; with a pod CIDR it still
// never dials loopback or metadata inside it; --dial-allow-loopback (tests
// only) opens loopback inside the list, and is logged as such. On main the
// empty default dialed everything, 169.254.169.254 included.
func TestServeDialsWhatDialAllowSays(t *testing.T) {
	tests := map[string]struct {
		flags    []string
		ip       string
		dialed   bool
		startLog string
	}{
		"empty: a pod IP":       {ip: "10.244.0.5", startLog: "--dial-allow is empty: no port is dialed"},
		"empty: loopback":       {ip: "127.0.0.1", startLog: "--dial-allow is empty: no port is dialed"},
		"empty: metadata":       {ip: "169.254.169.254", startLog: "--dial-allow is empty: no port is dialed"},
		"pod CIDR: a pod IP":    {flags: []string{"--dial-allow", "10.244.0.0/16"}, ip: "10.244.0.5", dialed: true},
		"all: metadata":         {flags: []string{"--dial-allow", "0.0.0.0/0,::/0"}, ip: "::ffff:169.254.169.254"},
		"all: loopback":         {flags: []string{"--dial-allow", "0.0.0.0/0"}, ip: "127.0.0.1"},
		"loopback flag":         {flags: []string{"--dial-allow", "127.0.0.0/8", "--dial-allow-loopback"}, ip: "127.0.0.1", dialed: true, startLog: "--dial-allow-loopback is set"},
		"loopback flag outside": {flags: []string{"--dial-allow", "10.0.0.0/8", "--dial-allow-loopback"}, ip: "127.0.0.1", startLog: "--dial-allow-loopback is set"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"--listen", "127.0.0.1:0", "--error-pages-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--insecure-plain-http"}, tc.flags...)
			c, err := parseFlags("serve", args, noEnv, io.Discard)
			require.NoError(t, err)
			var logs bytes.Buffer
			a, err := wire(c, slog.New(slog.NewTextHandler(&logs, nil)))
			require.NoError(t, err)
			for _, s := range a.servers {
				s.ln.Close()
			}
			if tc.startLog != "" {
				require.Contains(t, logs.String(), tc.startLog)
			} else {
				require.NotContains(t, logs.String(), "level=WARN msg=--dial")
				require.NotContains(t, logs.String(), "level=WARN msg=\"--dial")
			}

			v := a.verifier.(*portcheck.Verifier)
			var mu sync.Mutex
			var dialed []string
			v.Dial = func(_ context.Context, _, addr string) (net.Conn, error) {
				mu.Lock()
				dialed = append(dialed, addr)
				mu.Unlock()
				return nil, io.EOF
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { v.Run(ctx); close(done) }()
			k := portcheck.Key{Namespace: "ns", Name: "app", Revision: "r"}
			require.True(t, v.Enqueue(portcheck.Job{Key: k, IP: tc.ip, Ports: []portcheck.Port{{Name: "http", Port: 80}}}))
			for v.Pending(k) { // one pass of a worker: nothing here waits on a real dial
				runtime.Gosched()
			}
			cancel()
			<-done
			mu.Lock()
			defer mu.Unlock()
			if tc.dialed {
				require.Len(t, dialed, 1)
			} else {
				require.Empty(t, dialed, "%s must not be dialed", tc.ip)
				r, ok := v.Get(k)
				require.True(t, ok)
				require.Contains(t, r.Ports[0].Err, "not dialed: ")
			}
		})
	}
}
