package syncbench

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stackdome/stackdome/hooks"
	"github.com/stackdome/stackdome/portcheck"
)

// fleetShapes are the requests of the fleet issue #29 measured (1,000
// StackResources with two ports each, hook version v2): a private app of
// one pod (its Deployment and Service observed, the chart's error-page
// Service related) and a public app of two (its IngressRoute, errors
// Middleware, mirrored error-page Service and EndpointSlice and
// PodDisruptionBudget too), each at steady state (status converged,
// Serving) and half way through a rollout (a new image: the new template
// applied, one updated pod surged in beside the old ones).
var fleetShapes = []struct {
	name  string
	shape Shape
}{
	{"private", Shape{Pods: 1, Ports: []int32{8080, 9090}}},
	{"private-rollout", Shape{Pods: 1, Ports: []int32{8080, 9090}, Rollout: true}},
	{"public", Shape{Pods: 2, Ports: []int32{8080, 9090}, Public: true}},
	{"public-rollout", Shape{Pods: 2, Ports: []int32{8080, 9090}, Public: true, Rollout: true}},
}

// BenchmarkFleet is the whole sync handler at the fleet's request shapes:
// the router's ServeHTTP on an in-memory request (the body read through
// http.MaxBytesReader, the budget, the decode, Sync's pipeline, the
// encode, the metrics), against a verifier holding the payload's view, so
// that every sync answers the request's own status (checked before
// timing). Besides ns/op it reports cpu-ns/op, the process's user and
// system CPU per sync (getrusage), which counts the collector's work on
// the other core too: the figure the fleet's 1.26 ms is of.
func BenchmarkFleet(b *testing.B) {
	for _, f := range fleetShapes {
		b.Run(f.name, func(b *testing.B) {
			p, err := BuildShape(fixture, f.shape, Verified)
			if err != nil {
				b.Fatal(err)
			}
			h := hooks.Router(&hooks.Handler{
				Verifier: fixedVerifier{p.verdicts},
				Now:      func() time.Time { return Now },
				Metrics:  hooks.NewMetrics(prometheus.NewRegistry()),
				Log:      slog.New(slog.DiscardHandler),
			}, func() bool { return true }, nil)
			settle(b, p, p.Body, func() ([]byte, error) {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(p.Body)))
				if rec.Code != http.StatusOK {
					return nil, fmt.Errorf("%d %s", rec.Code, rec.Body)
				}
				return rec.Body.Bytes(), nil
			})
			w := &discard{h: http.Header{}}
			b.SetBytes(int64(len(p.Body)))
			b.ReportAllocs()
			cpu0 := cpuTime()
			n := 0
			for b.Loop() {
				r, _ := http.NewRequest(http.MethodPost, "/sync", bytes.NewReader(p.Body))
				clear(w.h)
				h.ServeHTTP(w, r)
				n++
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(n), "cpu-ns/op")
			b.ReportMetric(float64(len(p.Body)), "request-bytes")
		})
	}
}

// cpuTime is the user and system CPU the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fixedVerifier is a verifier that holds one view and never dials: it
// accepts every dial asked for and drops it.
type fixedVerifier struct{ v hooks.Verdicts }

func (f fixedVerifier) Get(k portcheck.Key) (portcheck.Result, bool) {
	if f.v == nil {
		return portcheck.Result{}, false
	}
	return f.v.Get(k)
}

func (f fixedVerifier) Pending(k portcheck.Key) bool { return f.v != nil && f.v.Pending(k) }
func (fixedVerifier) Enqueue(portcheck.Job) bool     { return true }
func (fixedVerifier) Forget(portcheck.Key)           {}
