package portcheck

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// Fairness, per-job bounds and backoff. The dials are a seam, not sockets:
// what is measured is the verifier's scheduling, and a black-holed port is
// a Dial that returns only when its context's timeout fires, as a connect
// to a pod that drops SYNs does.

// blackHole is a Dial that never connects: it answers the dial context's
// error (deadline exceeded) when it is done.
func blackHole(ctx context.Context, _, _ string) (net.Conn, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// tenantJobs are n apps of namespace ns, each with ports black-holed ports.
func tenantJobs(ns string, n, ports int) []Job {
	var ps []Port
	for i := range ports {
		ps = append(ps, Port{Name: "p" + strconv.Itoa(i), Port: int32(8000 + i)})
	}
	jobs := make([]Job, n)
	for i := range jobs {
		jobs[i] = Job{Key: Key{ns, "app" + strconv.Itoa(i), "r1"}, IP: "10.244.1." + strconv.Itoa(i+1), Ports: ps}
	}
	return jobs
}

var podCIDR = []netip.Prefix{netip.MustParsePrefix("10.244.0.0/16")}

// TestDialGoroutinesAreFixed: a job's ports are dialed by the verifier's
// fixed pool of workers, never by a goroutine per port. One job with 64
// hanging ports, 8 workers: besides the test's own, the verifier runs its 8
// workers and its evictor, however many ports there are. On main the job
// started one goroutine per port (63 more here; 113k for 8 forged jobs of
// 65,535 ports).
func TestDialGoroutinesAreFixed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const workers = 8
		baseline := bubbleGoroutines(t)
		v := New(Config{Workers: workers, DialTimeout: time.Minute, Allow: podCIDR})
		v.Dial = blackHole
		start(t, v) // +1: the goroutine running Run
		require.True(t, v.Enqueue(tenantJobs("t", 1, 64)[0]))
		synctest.Wait()
		got := bubbleGoroutines(t) - baseline
		require.LessOrEqual(t, got, 1+workers+2, "goroutines for one 64-port job: Run, %d workers, the evictor (and a stop hook)", workers)
	})
}

// TestPerJobCap: one job's dials in flight never exceed Config.PerJob,
// however many workers are idle; two jobs each get their PerJob.
func TestPerJobCap(t *testing.T) {
	for name, tc := range map[string]struct{ jobs, want int }{"one job": {1, 4}, "two jobs": {2, 8}} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				v := New(Config{Workers: 32, PerJob: 4, Allow: podCIDR})
				h := &heldDials{}
				v.Dial = h.dial
				start(t, v)
				for _, j := range tenantJobs("t", tc.jobs, 64) {
					require.True(t, v.Enqueue(j))
				}
				var waves []int
				for {
					synctest.Wait()
					h.mu.Lock()
					n := h.inFlight
					h.mu.Unlock()
					if n == 0 {
						break
					}
					waves = append(waves, n)
					h.releaseAll()
				}
				want := make([]int, 64/4)
				for i := range want {
					want[i] = tc.want
				}
				if d := cmp.Diff(want, waves); d != "" {
					t.Errorf("dials in flight per wave (-want +got):\n%s", d)
				}
			})
		})
	}
}

// TestFairAcrossNamespaces: with every worker busy on one tenant's
// black-holed ports (50 apps × 64 ports), another namespace's one-port job
// gets the first worker that frees, so its verdict lands within one dial
// timeout of its Enqueue — not behind the tenant's 3,200 dials.
func TestFairAcrossNamespaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 100 * time.Millisecond
		v := New(Config{Workers: 32, DialTimeout: timeout, QueueSize: 64, Allow: podCIDR})
		other := Job{Key: Key{"other", "web", "r1"}, IP: "10.244.9.9", Ports: []Port{{"http", 8080}}}
		v.Dial = func(ctx context.Context, n, addr string) (net.Conn, error) {
			if addr == "10.244.9.9:8080" {
				return fakeConn{}, nil
			}
			return blackHole(ctx, n, addr)
		}
		landed := make(chan Key, 64)
		v.landed = func(k Key) { landed <- k }
		start(t, v)
		for _, j := range tenantJobs("tenant", 50, 64) {
			require.True(t, v.Enqueue(j))
		}
		time.Sleep(timeout / 2) // every worker is mid-dial
		t0 := time.Now()
		require.True(t, v.Enqueue(other))
		for k := range landed {
			if k == other.Key {
				break
			}
		}
		waited := time.Since(t0)
		require.LessOrEqual(t, waited, timeout, "the other app's verdict came %v after its Enqueue", waited)
		got, ok := v.Get(other.Key)
		require.True(t, ok)
		require.True(t, got.AllOpen())
	})
}

// TestInconclusiveBackoff: a resource whose verdict is inconclusive is not
// redialed for the same revision and IP before its backoff, which doubles
// with each inconclusive verdict up to Recheck and is reset by a conclusive
// one; a new IP (another pod) is dialed at once. The state lives in the
// resource's one entry, so it is bounded by the resources, and evicted with
// them.
func TestInconclusiveBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var answer atomic.Value // "hang" or "open"
		answer.Store("hang")
		v := New(Config{DialTimeout: time.Second, Backoff: 10 * time.Second, Recheck: 35 * time.Second, Allow: podCIDR})
		v.Dial = func(ctx context.Context, n, addr string) (net.Conn, error) {
			if answer.Load() == "open" {
				return fakeConn{}, nil
			}
			return blackHole(ctx, n, addr)
		}
		start(t, v)
		j := tenantJobs("t", 1, 2)[0]
		enqueueAndLand := func() {
			t.Helper()
			require.True(t, v.Enqueue(j))
			synctest.Wait()
			time.Sleep(time.Second) // the dial timeout
			synctest.Wait()
			require.False(t, v.Pending(j.Key))
		}
		// refusedFor checks Enqueue refuses until d from now, and waits it out.
		refusedFor := func(d time.Duration) {
			t.Helper()
			time.Sleep(d - time.Nanosecond)
			require.False(t, v.Enqueue(j), "redial within backoff %v", d)
			time.Sleep(time.Nanosecond)
		}

		enqueueAndLand() // inconclusive at t=1s: backoff 10s from the landing
		r, ok := v.Get(j.Key)
		require.True(t, ok)
		require.False(t, r.AllOpen())
		refusedFor(10 * time.Second)
		enqueueAndLand() // second inconclusive: 20s
		refusedFor(20 * time.Second)
		enqueueAndLand() // third: 40s, capped at Recheck's 35s
		moved := j
		moved.IP = "10.244.7.7"
		require.True(t, v.Enqueue(moved), "another pod's IP is dialed at once")
		synctest.Wait()
		time.Sleep(time.Second)
		synctest.Wait()
		j = moved
		refusedFor(35 * time.Second) // the entry's backoff, now for the new IP
		answer.Store("open")
		require.True(t, v.Enqueue(j))
		synctest.Wait()
		r, _ = v.Get(j.Key)
		require.True(t, r.AllOpen())
		require.True(t, v.Enqueue(j), "a conclusive verdict resets the backoff")
		synctest.Wait()
		require.Equal(t, 3.0, testutil.ToFloat64(v.m.refusedBackoff), "one refusal per refusedFor")
		require.Equal(t, 1, entries(v), "backoff state is the resource's one entry")
	})
}

// BenchmarkFairness is issue 25's unfair tenant: 50 apps of one namespace,
// each with 64 black-holed ports (the CRD's maximum), are queued, and then
// one other app's one-port check. Reported: how long after its Enqueue the
// other app's verdict landed, in ms and in dial timeouts. The target is one
// dial timeout plus a small bound (the first worker to free takes it). On
// main it waited behind the whole backlog: 50 jobs × 64 ports / 32 workers
// × 100 ms ≈ 10 s, about 100 dial timeouts.
func BenchmarkFairness(b *testing.B) {
	const timeout = 100 * time.Millisecond
	var waited time.Duration
	for b.Loop() {
		v := New(Config{Workers: 32, DialTimeout: timeout, QueueSize: 64, Allow: podCIDR})
		other := Job{Key: Key{"other", "web", "r1"}, IP: "10.244.9.9", Ports: []Port{{"http", 8080}}}
		v.Dial = func(ctx context.Context, n, addr string) (net.Conn, error) {
			if addr == "10.244.9.9:8080" {
				return fakeConn{}, nil
			}
			return blackHole(ctx, n, addr)
		}
		var mu sync.Mutex
		done := make(chan struct{})
		v.landed = func(k Key) {
			if k == other.Key {
				mu.Lock()
				close(done)
				mu.Unlock()
			}
		}
		stop := start(b, v)
		for _, j := range tenantJobs("tenant", 50, 64) {
			if !v.Enqueue(j) {
				b.Fatal("refused")
			}
		}
		time.Sleep(timeout / 2) // every worker is mid-dial on the tenant
		t0 := time.Now()
		if !v.Enqueue(other) {
			b.Fatal("refused")
		}
		<-done
		waited = time.Since(t0)
		stop()
	}
	b.ReportMetric(float64(waited.Milliseconds()), "other-first-verdict-ms")
	b.ReportMetric(float64(waited)/float64(timeout), "dial-timeouts")
	if waited > timeout+100*time.Millisecond {
		b.Errorf("the other app's first verdict took %v, more than one dial timeout (%v) plus 100ms", waited, timeout)
	}
}
