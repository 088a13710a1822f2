package portcheck

import (
	"context"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// TestStress hammers one running verifier with 100,000 Enqueue, Get, Pending
// and Forget calls from 50 goroutines (run it under -race). Each revision
// dials its own IP, so a Get that ever returned another revision's Result
// would show. Afterwards nothing is pending, there is at most one entry per
// resource, and every Enqueue is counted once, as accepted or refused.
func TestStress(t *testing.T) {
	const (
		goroutines = 50
		perG       = 100_000 / goroutines
		resources  = 40
		revisions  = 5
	)
	v := newTest(Config{Workers: 8, QueueSize: 64})
	v.Dial = func(ctx context.Context, _, addr string) (net.Conn, error) {
		if rand.IntN(2) == 0 {
			return nil, errRefused
		}
		return fakeConn{}, nil
	}
	stop := start(t, v)
	ipOf := func(rev int) string { return "127.0.0." + strconv.Itoa(rev+1) }

	var enqueues, wrong atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for range perG {
				rev := rng.IntN(revisions)
				k := Key{"ns", "r" + strconv.Itoa(rng.IntN(resources)), strconv.Itoa(rev)}
				switch op := rng.IntN(10); {
				case op < 3:
					enqueues.Add(1)
					v.Enqueue(Job{Key: k, IP: ipOf(rev), Ports: []Port{{"a", 1}, {"b", 2}}})
				case op < 8:
					if r, ok := v.Get(k); ok && (r.IP != ipOf(rev) || len(r.Ports) != 2) {
						wrong.Add(1)
					}
				case op < 9:
					v.Pending(k)
				default:
					v.Forget(k)
				}
			}
		})
	}
	wg.Wait()
	stop()

	require.Zero(t, wrong.Load(), "Get returned another revision's result")
	v.mu.RLock()
	require.Empty(t, v.pending)
	require.LessOrEqual(t, len(v.entries), resources)
	v.mu.RUnlock()
	counted := testutil.ToFloat64(v.m.enqueued) + testutil.ToFloat64(v.m.refusedPending) +
		testutil.ToFloat64(v.m.refusedFull) + testutil.ToFloat64(v.m.refusedStop)
	require.Equal(t, float64(enqueues.Load()), counted)
	require.Positive(t, testutil.ToFloat64(v.m.enqueued))
}
