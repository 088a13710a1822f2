package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
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
		"cancelled: drain for the delay, stop the servers, then the verifier": {
			stop: func(cancel func(), _ map[string]func()) { cancel() },
			want: []string{
				"log serving", "log draining",
				"close errorPages (readyz 503: true)", "close hooks (readyz 503: true)", "close metrics (readyz 503: true)",
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
				"log serving", "log draining", "close errorPages (readyz 503: true)",
				"close hooks (readyz 503: true)", "close metrics (readyz 503: true)",
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

				if d := cmp.Diff(tc.want, closesSorted(e.get())); d != "" {
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

// closesSorted sorts each run of consecutive "close" events: the servers
// stop concurrently, in no order.
func closesSorted(list []string) []string {
	for i := 0; i < len(list); {
		j := i
		for j < len(list) && strings.HasPrefix(list[j], "close ") {
			j++
		}
		slices.Sort(list[i:j])
		i = max(j, i+1)
	}
	return list
}

// pipeListener hands out the server ends of in-memory connections.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
	at     *time.Time // when Close was called
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{}), at: new(time.Time)}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { *l.at = time.Now(); close(l.closed) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 1} }

// client is an HTTP client whose every connection is a new pipe to l.
func (l *pipeListener) client() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		c, s := net.Pipe()
		select {
		case l.conns <- s:
			return c, nil
		case <-l.closed:
			return nil, errors.New("connection refused")
		}
	}}}
}

// TestHungHookCutsNoPage: a hook request that never finishes holds only the
// hook server: the page server stops accepting at once, and its in-flight
// request, slower than anything the hooks leave of a shared budget, is
// answered. On main the servers stopped one after another under one budget:
// the pages were still accepting after the hooks' whole timeout, and
// what they served then was cut.
func TestHungHookCutsNoPage(t *testing.T) {
	const shutdownTimeout = 5 * time.Second
	synctest.Test(t, func(t *testing.T) {
		hookStarted, pageStarted := make(chan struct{}), make(chan struct{})
		hooks := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.ReadAll(r.Body) // so that the server sees its connection close
			close(hookStarted)
			<-r.Context().Done() // hangs until the server cuts it
		})
		pages := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			close(pageStarted)
			time.Sleep(shutdownTimeout - time.Second) // the fake clock of the bubble
			io.WriteString(w, "page")
		})
		hookLn, pageLn, metricsLn := newPipeListener(), newPipeListener(), newPipeListener()
		a := &app{log: slog.New(slog.DiscardHandler), verifier: fakeVerifier{&events{}}, draining: new(atomic.Bool), servers: []served{
			{"hooks", &http.Server{Handler: hooks}, hookLn},
			{"errorPages", &http.Server{Handler: pages}, pageLn},
			{"metrics", &http.Server{Handler: http.NotFoundHandler()}, metricsLn},
		}}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() { done <- a.run(ctx, 0, shutdownTimeout) }()

		go hookLn.client().Post("http://hooks/sync", "application/json", strings.NewReader("{}"))
		type answer struct {
			code int
			body string
			err  error
		}
		page := make(chan answer)
		go func() {
			resp, err := pageLn.client().Get("http://pages/")
			if err != nil {
				page <- answer{err: err}
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			page <- answer{resp.StatusCode, string(b), err}
		}()
		<-hookStarted
		<-pageStarted
		start := time.Now()
		cancel()
		got := <-page
		err := <-done

		if got.err != nil || got.code != http.StatusOK || got.body != "page" {
			t.Errorf("page answered %d %q, %v; want 200 \"page\"", got.code, got.body, got.err)
		}
		if d := pageLn.at.Sub(start); d != 0 {
			t.Errorf("the page server stopped accepting %s after the stop began, want at once", d)
		}
		if err == nil || !strings.Contains(err.Error(), "shutting down hooks") || strings.Contains(err.Error(), "errorPages") {
			t.Errorf("run = %v; want the hooks' shutdown timeout alone", err)
		}
	})
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
			args := []string{"--listen", addr(tc.listen), "--error-pages-listen", addr(tc.pages), "--metrics-listen", addr(tc.metrics), "--insecure-plain-http"}
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
