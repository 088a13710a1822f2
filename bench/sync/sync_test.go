package syncbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/stackdome/stackdome/hooks"
	"github.com/stackdome/stackdome/internal/loopback"
	"github.com/stackdome/stackdome/portcheck"
)

const fixture = "../../testdata/sync/serving.request.json"

var payloads = struct {
	once       sync.Once
	three      Payload
	fifty      Payload
	unverified Payload
	err        error
}{}

// load builds the 3-pod and 50-pod requests once per run, at the fixpoint
// of a verifier that found every port open (Verified). Their ports are three
// loopback listeners that accept every connection, so the live verifier
// finds them open too and, as at steady state, redials only after
// --port-recheck: the hook's common case (settle checks the live answer is
// the request's status before anything is timed). The bodies are
// At("bench", "127.0.0.") — the dialed pod is 127.0.0.1. unverified is the
// 3-pod request of a resource the verifier knows nothing of.
func load(tb testing.TB) (three, fifty, unverified Payload) {
	payloads.once.Do(func() {
		var ports [3]int32
		for i := range ports {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				payloads.err = err
				return
			}
			go loopback.AcceptAndClose(ln) // lives as long as the benchmark binary
			ports[i] = int32(ln.Addr().(*net.TCPAddr).Port)
		}
		payloads.three, payloads.err = Build(fixture, 3, ports, Verified)
		if payloads.err == nil {
			payloads.fifty, payloads.err = Build(fixture, 50, ports, Verified)
		}
		if payloads.err == nil {
			payloads.unverified, payloads.err = Build(fixture, 3, ports, Unverified)
		}
	})
	if payloads.err != nil {
		tb.Fatal(payloads.err)
	}
	return payloads.three, payloads.fifty, payloads.unverified
}

// settle sends body (a request of p) to a hook whose verifier starts
// empty, and fails tb unless the answer's status is the request's: the
// request is then at its fixpoint on this server — the steady state, where
// Metacontroller writes no status — and what is timed is what the figures
// claim. For a Verified payload it first waits, within a deadline, for the
// verifier to hold its verdict (the answer no longer asks to be called
// back: no dial is awaited); an Unverified one is checked on its first
// answer. It returns that answer.
func settle(tb testing.TB, p Payload, body []byte, send func() ([]byte, error)) []byte {
	tb.Helper()
	var req struct {
		Parent struct{ Status json.RawMessage }
	}
	if err := json.Unmarshal(body, &req); err != nil {
		tb.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second) // the first dial is on loopback
	for {
		answer, err := send()
		if err != nil {
			tb.Fatal(err)
		}
		var resp struct {
			Status             json.RawMessage
			ResyncAfterSeconds float64
		}
		if err := json.Unmarshal(answer, &resp); err != nil {
			tb.Fatal(err)
		}
		if p.View == Verified && resp.ResyncAfterSeconds != 0 {
			if time.Now().After(deadline) {
				tb.Fatalf("the verifier holds no verdict after 30 s: the answer still asks to be called back in %gs", resp.ResyncAfterSeconds)
			}
			continue // polling the verifier's first dial, with a deadline
		}
		if d := StatusDiff(req.Parent.Status, resp.Status); d != "" {
			tb.Fatalf("the request is not at its fixpoint: the answer's status differs (-request +answer):\n%s", d)
		}
		return answer
	}
}

// body is the request the HTTP benchmarks send.
func body(p Payload) []byte { return p.At("bench", "127.0.0.") }

// serveLoopback runs h on 127.0.0.1:0 with the http.Server settings of
// `stackdome serve`'s defaults, and returns its /sync URL.
func serveLoopback(tb testing.TB, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	go s.Serve(ln)
	tb.Cleanup(func() { s.Close() })
	return "http://" + ln.Addr().String() + "/sync"
}

// stackdome is the real hook: hooks.Router with metrics and a running
// verifier allowed to dial loopback only.
func stackdome(tb testing.TB) http.Handler {
	reg := prometheus.NewRegistry()
	v := portcheck.New(portcheck.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, AllowLoopback: true, Registerer: reg})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { v.Run(ctx); close(done) }()
	tb.Cleanup(func() { cancel(); <-done })
	// The zero Config is the default one (hooks.Config).
	h := &hooks.Handler{Verifier: v, Metrics: hooks.NewMetrics(reg), Log: slog.New(slog.DiscardHandler)}
	return hooks.Router(h, func() bool { return true }, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
}

// floor is the least a hook can do: read the body, check it is JSON, write
// a fixed answer of the given size.
func floor(answer []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || !json.Valid(body) {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(answer)))
		w.Write(answer)
	})
}

// generic is what a hook written against map[string]any does: decode the
// whole request, encode an answer (the same as stackdome's, as a map).
func generic(answer []byte) http.Handler {
	var resp map[string]any
	if err := json.Unmarshal(answer, &resp); err != nil {
		panic(err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		body, err := io.ReadAll(r.Body)
		if err == nil {
			err = json.Unmarshal(body, &req)
		}
		if err != nil || req["parent"] == nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		out, err := json.Marshal(resp)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", fmt.Sprint(len(out)))
		w.Write(out)
	})
}

func newClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, DisableCompression: true}}
}

// post sends body and returns the answer; it fails unless the answer is 200.
func post(c *http.Client, url string, body []byte) ([]byte, error) {
	resp, err := c.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &statusError{url: url, code: resp.StatusCode, body: out}
	}
	return out, nil
}

// statusError is an answer other than 200.
type statusError struct {
	url  string
	code int
	body []byte
}

func (e *statusError) Error() string { return fmt.Sprintf("%s: %d %s", e.url, e.code, e.body) }

// refused reports whether err is the hook's 429: the hook memory budget
// full (hooks' admission), which Metacontroller retries after Retry-After.
func refused(err error) bool {
	var se *statusError
	return errors.As(err, &se) && se.code == http.StatusTooManyRequests
}

// clients is the number of concurrent clients of the closed-loop runs: 4,
// the requests in flight one replica took before admission counted bytes
// (kept so the figures compare). Metacontroller's 5 workers per
// controller are spread over the chart's 2 replicas.
const clients = 4

// run sends n requests from clients goroutines and returns the wall time.
func run(tb testing.TB, c *http.Client, url string, body []byte, n int) time.Duration {
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	start := time.Now()
	for range clients {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if _, err := post(c, url, body); err != nil {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	d := time.Since(start)
	if err, _ := failed.Load().(error); err != nil {
		tb.Fatal(err)
	}
	return d
}

type target struct {
	name string
	url  string
}

// race times b.N requests of body, split into rounds that rotate through
// targets (the last of which is stackdome) so that all share whatever else
// the machine is doing, and reports stackdome's ns/op, the baselines', and
// x-floor and x-generic: stackdome's time per request over theirs.
func race(b *testing.B, c *http.Client, targets []target, body, answer []byte) {
	total := map[string]time.Duration{}
	const rounds = 6
	per := max(b.N/rounds, 1)
	b.ResetTimer()
	for r := range rounds {
		for i := range targets {
			t := targets[(i+r)%len(targets)] // rotate the order
			total[t.name] += run(b, c, t.url, body, per)
		}
	}
	b.StopTimer()
	n := float64(per * rounds)
	ns := func(name string) float64 { return float64(total[name].Nanoseconds()) / n }
	b.ReportMetric(float64(len(body)), "request-bytes")
	b.ReportMetric(float64(len(answer)), "answer-bytes")
	b.ReportMetric(ns("stackdome"), "ns/op")
	b.ReportMetric(ns("floor"), "floor-ns/op")
	b.ReportMetric(ns("generic"), "generic-ns/op")
	b.ReportMetric(ns("stackdome")/ns("floor"), "x-floor")
	b.ReportMetric(ns("stackdome")/ns("generic"), "x-generic")
}

// BenchmarkSyncHTTP measures time per sync request over HTTP with 8
// concurrent clients, for stackdome and its two baselines side by side:
// rounds alternate between the three so that they share whatever else the
// machine is doing. ns/op is stackdome's; x-floor and x-generic are its
// time per request over theirs (targets: ≤ 3 and ≤ 0.7). The request is at
// its fixpoint on the running server (settle): Serving, no dial.
func BenchmarkSyncHTTP(b *testing.B) {
	three, fifty, _ := load(b)
	for _, p := range []Payload{three, fifty} {
		b.Run(fmt.Sprintf("pods=%d", p.Pods), func(b *testing.B) {
			c := newClient(clients)
			sd := serveLoopback(b, stackdome(b))
			// The verifier answers the first dial; from then on the
			// answer's status is the request's.
			answer := settle(b, p, body(p), func() ([]byte, error) { return post(c, sd, body(p)) })
			targets := []target{
				{"floor", serveLoopback(b, floor(answer))},
				{"generic", serveLoopback(b, generic(answer))},
				{"stackdome", sd},
			}
			for _, t := range targets {
				got, err := post(c, t.url, body(p))
				if err != nil {
					b.Fatal(err)
				}
				if d := len(got) - len(answer); d < -64 || d > 64 {
					b.Fatalf("%s answers %d bytes, stackdome %d", t.name, len(got), len(answer))
				}
				run(b, c, t.url, body(p), 50)
			}
			race(b, c, targets, body(p), answer)
		})
	}
}

// BenchmarkSyncPaced is an open-loop load: 1,000 requests a second for 3
// seconds of the 3-pod request at its fixpoint, each sent at its scheduled
// time whatever the earlier ones are doing, its latency counted from that
// time (so a stall is not hidden by the sender waiting for it). Target:
// p99 < 5 ms.
func BenchmarkSyncPaced(b *testing.B) {
	three, _, _ := load(b)
	const rate, seconds = 1000, 3
	url := serveLoopback(b, stackdome(b))
	c := newClient(256)
	req := body(three)
	settle(b, three, req, func() ([]byte, error) { return post(c, url, req) })
	run(b, c, url, req, 200) // warm up the connections
	b.ResetTimer()
	for range b.N {
		lat, elapsed := openLoop(b, c, url, req, rate, seconds)
		n := len(lat)
		q := func(p float64) float64 { return float64(lat[int(p*float64(n-1))].Microseconds()) / 1000 }
		b.ReportMetric(float64(n)/elapsed.Seconds(), "req/s")
		b.ReportMetric(q(0.50), "p50-ms")
		b.ReportMetric(q(0.99), "p99-ms")
		b.ReportMetric(q(0.999), "p99.9-ms")
		b.ReportMetric(q(1), "max-ms")
	}
	b.ReportMetric(0, "ns/op")
}

// openLoop sends rate requests a second for seconds, each at its scheduled
// time whatever the earlier ones are doing, and returns their latencies,
// counted from that time (so a stall is not hidden by the sender waiting for
// it), sorted, and the wall time. Any answer but 200 or 429 fails b. An open
// loop does not wait for answers, so on a busy machine many can be in
// flight: those the hook memory budget does not hold are answered 429 at
// once, as designed, and reported as refused-% rather than hidden.
func openLoop(b *testing.B, c *http.Client, url string, body []byte, rate, seconds int) ([]time.Duration, time.Duration) {
	n := rate * seconds
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	var failed, shed atomic.Int64
	start := time.Now()
	for i := range n {
		at := start.Add(time.Duration(i) * time.Second / time.Duration(rate))
		time.Sleep(time.Until(at)) // pacing the sender, not synchronizing
		wg.Go(func() {
			switch _, err := post(c, url, body); {
			case refused(err):
				shed.Add(1)
			case err != nil:
				failed.Add(1)
			}
			lat[i] = time.Since(at)
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if failed.Load() > 0 {
		b.Fatalf("%d of %d requests failed", failed.Load(), n)
	}
	b.ReportMetric(float64(shed.Load())/float64(n)*100, "refused-%")
	slices.Sort(lat)
	return lat, elapsed
}

// discard is a ResponseWriter that keeps nothing.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

// BenchmarkHandler is the hook without the network: the router's
// ServeHTTP on an in-memory request at its fixpoint, for profiling
// (-cpuprofile) what the handler itself costs per request.
func BenchmarkHandler(b *testing.B) {
	three, fifty, _ := load(b)
	for _, p := range []Payload{three, fifty} {
		b.Run(fmt.Sprintf("pods=%d", p.Pods), func(b *testing.B) {
			h := stackdome(b)
			w := &discard{h: http.Header{}}
			req := body(p)
			settle(b, p, req, func() ([]byte, error) {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(req)))
				if rec.Code != http.StatusOK {
					return nil, fmt.Errorf("%d %s", rec.Code, rec.Body)
				}
				return rec.Body.Bytes(), nil
			})
			b.SetBytes(int64(len(req)))
			b.ReportAllocs()
			for b.Loop() {
				r, _ := http.NewRequest(http.MethodPost, "/sync", bytes.NewReader(req))
				clear(w.h)
				h.ServeHTTP(w, r)
			}
		})
	}
}

// BenchmarkSyncWhileDialsHang: every dial of the verifier hangs (until the
// benchmark ends) and its queue is saturated, while 200 syncs of distinct
// resources each ask for a dial. Each request is at the fixpoint of a
// verifier that knows nothing (Unverified), which is what this verifier
// answers. It reports their latency; p100-ms must stay far below
// Metacontroller's 10 s webhook timeout (target < 100 ms).
func BenchmarkSyncWhileDialsHang(b *testing.B) {
	_, _, unverified := load(b)
	release := make(chan struct{})
	v := portcheck.New(portcheck.Config{Workers: 2, QueueSize: 8, DialTimeout: time.Hour})
	v.Dial = func(ctx context.Context, _, _ string) (net.Conn, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, context.Canceled
	}
	url := serveLoopback(b, hooks.Router(&hooks.Handler{Verifier: v, Log: slog.New(slog.DiscardHandler)}, nil, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { v.Run(ctx); close(done) }()
	defer func() { close(release); cancel(); <-done }()
	c := newClient(1)
	warm := unverified.At("warm", "127.0.0.")
	settle(b, unverified, warm, func() ([]byte, error) { return post(c, url, warm) })
	const n = 200
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		for j := range n {
			body := unverified.At(fmt.Sprintf("ns-%d-%d", i, j), "127.0.0.")
			start := time.Now()
			if _, err := post(c, url, body); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(q(1), "p100-ms")
	b.ReportMetric(0, "ns/op")
}
