package syncbench

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/stackdome/stackdome/hooks"
	"github.com/stackdome/stackdome/portcheck"
)

// productionFixture is the golden request of the README's app: every field
// group, 3 pods, the error wiring and whatever the fixture relates besides
// (its own Traefik Middlewares, since #20).
const productionFixture = "../../testdata/sync/production-app.request.json"

// production is the hook with a verifier that may dial nothing (an empty
// --dial-allow): the fixture's pod IPs are not ours to dial, so every sync
// reads the same inconclusive verdict and answers the same bytes. What is
// timed is decoding the request, the pipeline and the answer, not a dial.
func production(tb testing.TB) (http.Handler, []byte) {
	body, err := os.ReadFile(productionFixture)
	if err != nil {
		tb.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	v := portcheck.New(portcheck.Config{Allow: nil, Registerer: reg})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { v.Run(ctx); close(done) }()
	tb.Cleanup(func() { cancel(); <-done })
	h := &hooks.Handler{Verifier: v, Metrics: hooks.NewMetrics(reg), Log: slog.New(slog.DiscardHandler)}
	return hooks.Router(h, func() bool { return true }, promhttp.HandlerFor(reg, promhttp.HandlerOpts{})), body
}

// BenchmarkProductionApp is the production-app request over HTTP against
// the floor and the generic hook (x-floor, x-generic, as BenchmarkSyncHTTP),
// its allocations in memory (allocs/op, B/op of the handler alone), and an
// open-loop 1,000 req/s for 3 s (p99-ms).
func BenchmarkProductionApp(b *testing.B) {
	b.Run("http", func(b *testing.B) {
		h, body := production(b)
		c := newClient(clients)
		sd := serveLoopback(b, h)
		answer, err := post(c, sd, body)
		if err != nil {
			b.Fatal(err)
		}
		targets := []target{{"floor", serveLoopback(b, floor(answer))}, {"generic", serveLoopback(b, generic(answer))}, {"stackdome", sd}}
		for _, t := range targets {
			run(b, c, t.url, body, 50)
		}
		race(b, c, targets, body, answer)
	})
	b.Run("handler", func(b *testing.B) {
		h, body := production(b)
		w := &discard{h: http.Header{}}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(body)))
		if rec.Code != http.StatusOK {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			r, _ := http.NewRequest(http.MethodPost, "/sync", bytes.NewReader(body))
			clear(w.h)
			h.ServeHTTP(w, r)
		}
	})
	b.Run("paced", func(b *testing.B) {
		h, body := production(b)
		const rate, seconds = 1000, 3
		url := serveLoopback(b, h)
		c := newClient(256)
		run(b, c, url, body, 200)
		b.ResetTimer()
		for range b.N {
			lat, _ := openLoop(b, c, url, body, rate, seconds)
			n := len(lat)
			q := func(p float64) float64 { return float64(lat[int(p*float64(n-1))].Microseconds()) / 1000 }
			b.ReportMetric(q(0.50), "p50-ms")
			b.ReportMetric(q(0.99), "p99-ms")
		}
		b.ReportMetric(0, "ns/op")
	})
}
