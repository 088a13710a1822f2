package portcheck

import (
	"context"
	"net"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// heldDials is a Dial that holds every call until the test releases it,
// counting the calls in flight (from the call until it returns; the
// connection it returns is closed at once).
type heldDials struct {
	mu       sync.Mutex
	inFlight int
	peak     int
	held     []chan struct{}
	total    int
}

func (h *heldDials) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	release := make(chan struct{})
	h.mu.Lock()
	h.inFlight++
	h.peak = max(h.peak, h.inFlight)
	h.total++
	h.held = append(h.held, release)
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.inFlight--
		h.mu.Unlock()
	}()
	select {
	case <-release:
		return fakeConn{}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// releaseAll lets every held call return and says how many were in flight.
func (h *heldDials) releaseAll() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.held {
		close(r)
	}
	h.held = nil
	return h.inFlight
}

// TestDialsInFlightNeverExceedWorkers is the package's promise: at most
// Config.Workers dials in flight at any moment, however many jobs are
// queued and however many ports each declares (a job dials its ports
// concurrently, so workers alone would allow Workers × ports). Every dial
// is held until all of the verifier's goroutines are blocked, so each step
// sees the most dials the verifier will start at once; then they are let go
// and the next wave is measured, until every port of every job is dialed.
func TestDialsInFlightNeverExceedWorkers(t *testing.T) {
	tests := map[string]struct {
		workers, jobs, ports int
	}{
		"more jobs than workers, 3 ports each":    {workers: 4, jobs: 20, ports: 3},
		"one job with more ports than workers":    {workers: 2, jobs: 1, ports: 5},
		"one worker":                              {workers: 1, jobs: 3, ports: 4},
		"more workers than ports of all the jobs": {workers: 16, jobs: 2, ports: 3},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				v := newTest(Config{Workers: tc.workers, QueueSize: tc.jobs})
				h := &heldDials{}
				v.Dial = h.dial
				var landed sync.WaitGroup
				landed.Add(tc.jobs)
				v.landed = func(Key) { landed.Done() }
				start(t, v)
				var ports []Port
				for i := range tc.ports {
					ports = append(ports, Port{Name: "p" + strconv.Itoa(i), Port: int32(8000 + i)})
				}
				for i := range tc.jobs {
					require.True(t, v.Enqueue(Job{Key: Key{"ns", "r" + strconv.Itoa(i), "1"}, IP: "127.0.0.1", Ports: ports}))
				}

				var waves []int // dials in flight at each step
				for {
					synctest.Wait()
					h.mu.Lock()
					n := h.inFlight
					h.mu.Unlock()
					if n == 0 {
						break
					}
					require.Equal(t, float64(n), testutil.ToFloat64(v.m.inFlight), "the in-flight gauge")
					waves = append(waves, n)
					h.releaseAll()
				}
				landed.Wait()

				total := tc.jobs * tc.ports
				require.Equal(t, total, h.total, "every port of every job is dialed once")
				// Each wave is as full as the limit allows: never above
				// Workers, and below it only when fewer dials are left.
				var want []int
				for left := total; left > 0; left -= min(left, tc.workers) {
					want = append(want, min(left, tc.workers))
				}
				if d := cmp.Diff(want, waves); d != "" {
					t.Errorf("dials in flight per wave, Workers=%d (-want +got):\n%s", tc.workers, d)
				}
				require.LessOrEqual(t, h.peak, tc.workers, "peak dials in flight")
			})
		})
	}
}
