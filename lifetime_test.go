package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The lifetime is tested in a synctest bubble: the drain delay passes on a
// fake clock, and synctest.Wait says when run is blocked. The listeners are
// fakes (what is tested is the order of the stop, not a socket), each
// recording when it is closed and whether /readyz then answered 503.

// events is the ordered record of one lifetime.
type events struct {
	mu   sync.Mutex
	list []string
}

func (e *events) add(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, fmt.Sprintf(format, args...))
}

func (e *events) get() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.list...)
}

// logEvents is a slog handler that records each message.
type logEvents struct{ e *events }

func (h logEvents) Enabled(context.Context, slog.Level) bool { return true }
func (h logEvents) Handle(_ context.Context, r slog.Record) error {
	h.e.add("log %s", r.Message)
	return nil
}
func (h logEvents) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h logEvents) WithGroup(string) slog.Handler      { return h }

// fakeListener accepts nothing: Accept blocks until the listener is closed
// or fail is closed (then it returns a permanent error, as a listener whose
// socket broke does).
type fakeListener struct {
	name     string
	e        *events
	draining *atomic.Bool
	fail     chan struct{}
	closed   chan struct{}
	once     sync.Once
}

func (l *fakeListener) Accept() (net.Conn, error) {
	select {
	case <-l.closed:
		return nil, net.ErrClosed
	case <-l.fail:
		return nil, errors.New("accept " + l.name + ": broken")
	}
}

func (l *fakeListener) Close() error {
	l.once.Do(func() {
		l.e.add("close %s (readyz 503: %v)", l.name, l.draining.Load())
		close(l.closed)
	})
	return nil
}

func (l *fakeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }

// fakeVerifier records when it stops.
type fakeVerifier struct{ e *events }

func (v fakeVerifier) Run(ctx context.Context) {
	<-ctx.Done()
	v.e.add("verifier stopped")
}

func TestLifetime(t *testing.T) {
	const drainDelay, shutdownTimeout = 10 * time.Second, 5 * time.Second
	tests := map[string]struct {
		// stop ends the serving: cancel is run's context, fail[name] makes
		// that server's listener break. It runs once run is blocked serving;
		// afterDrain, once run is blocked in the drain.
		stop, afterDrain func(cancel func(), fail map[string]func())
		want             []string
		wantErr          string
		wantElapsed      time.Duration
	}{
		"cancelled: drain for the delay, stop servers in order, then the verifier": {
			stop: func(cancel func(), _ map[string]func()) { cancel() },
			want: []string{
				"log serving", "log draining",
				"close hooks (readyz 503: true)", "close errorPages (readyz 503: true)", "close metrics (readyz 503: true)",
				"verifier stopped", "log stopped",
			},
			wantElapsed: drainDelay,
		},
		"a server fails: no drain delay, the other server stops, the error is returned": {
			stop: func(_ func(), fail map[string]func()) { fail["errorPages"]() },
			want: []string{
				"log serving", "close errorPages (readyz 503: false)", "log draining",
				"close hooks (readyz 503: true)", "close metrics (readyz 503: true)",
				"verifier stopped", "log stopped",
			},
			wantErr: "accept errorPages: broken",
		},
		"a server fails during the drain: the drain ends at once": {
			stop:       func(cancel func(), _ map[string]func()) { cancel() },
			afterDrain: func(_ func(), fail map[string]func()) { fail["hooks"]() },
			want: []string{
				"log serving", "log draining", "close hooks (readyz 503: true)",
				"close errorPages (readyz 503: true)", "close metrics (readyz 503: true)",
				"verifier stopped", "log stopped",
			},
			wantErr: "accept hooks: broken",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := &events{}
				a := &app{log: slog.New(logEvents{e}), verifier: fakeVerifier{e}, draining: new(atomic.Bool)}
				fail := map[string]func(){}
				for _, n := range []string{"hooks", "errorPages", "metrics"} {
					ln := &fakeListener{name: n, e: e, draining: a.draining, fail: make(chan struct{}), closed: make(chan struct{})}
					fail[n] = func() { close(ln.fail) }
					a.servers = append(a.servers, served{n, &http.Server{Handler: http.NotFoundHandler()}, ln})
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				start := time.Now()
				var err error
				var elapsed time.Duration
				done := make(chan struct{})
				go func() {
					err = a.run(ctx, drainDelay, shutdownTimeout)
					elapsed = time.Since(start)
					close(done)
				}()
				synctest.Wait() // serving
				tc.stop(cancel, fail)
				if tc.afterDrain != nil {
					synctest.Wait() // draining
					tc.afterDrain(cancel, fail)
				}
				<-done

				if d := cmp.Diff(tc.want, e.get()); d != "" {
					t.Errorf("events (-want +got):\n%s", d)
				}
				gotErr := ""
				if err != nil {
					gotErr = err.Error()
				}
				if d := cmp.Diff(tc.wantErr, gotErr); d != "" {
					t.Errorf("error (-want +got):\n%s", d)
				}
				if elapsed != tc.wantElapsed {
					t.Errorf("run took %s, want %s", elapsed, tc.wantElapsed)
				}
			})
		})
	}
}

// TestWireRefusesAddresses: an address that cannot be bound is an error
// naming which listener, and the listeners bound before it are closed again
// (their ports can be bound at once).
func TestWireRefusesAddresses(t *testing.T) {
	const free = "free" // a loopback port free when the test starts
	tests := map[string]struct {
		listen, pages, metrics string
		want                   string
	}{
		"hooks":   {listen: "nowhere", pages: free, metrics: free, want: "listening for hooks: listen tcp: address nowhere: missing port in address"},
		"pages":   {listen: free, pages: "nowhere", metrics: free, want: "listening for error pages: listen tcp: address nowhere: missing port in address"},
		"metrics": {listen: free, pages: free, metrics: "nowhere", want: "listening for metrics: listen tcp: address nowhere: missing port in address"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var bound []string
			addr := func(a string) string {
				if a != free {
					return a
				}
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				a = ln.Addr().String()
				ln.Close()
				bound = append(bound, a)
				return a
			}
			args := []string{"--listen", addr(tc.listen), "--error-pages-listen", addr(tc.pages), "--metrics-listen", addr(tc.metrics)}
			c, err := parseFlags("serve", args, noEnv, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			a, err := wire(c, slog.New(slog.DiscardHandler))
			if a != nil || err == nil {
				t.Fatalf("wire = %v, %v; want an error", a, err)
			}
			if d := cmp.Diff(tc.want, err.Error()); d != "" {
				t.Errorf("error (-want +got):\n%s", d)
			}
			for _, b := range bound {
				ln, err := net.Listen("tcp", b)
				if err != nil {
					t.Errorf("%s still bound after wire failed: %v", b, err)
					continue
				}
				ln.Close()
			}
		})
	}
}
