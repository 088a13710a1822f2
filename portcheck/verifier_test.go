package portcheck

import (
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// Ordering and time tests. Dials are scripted (see script) and run inside a
// synctest bubble: time is fake, and synctest.Wait returns once every
// goroutine of the verifier is blocked, so no test sleeps for real.

var (
	testKey  = Key{"shop", "web", "rev1"}
	testJob  = Job{Key: testKey, IP: "127.0.0.1", Ports: []Port{{"http", 8080}}}
	open8080 = []PortResult{{Name: "http", Port: 8080, State: Open}}
	shut8080 = []PortResult{{Name: "http", Port: 8080, State: Closed, Err: errRefused.Error()}}
)

// bubbleGoroutines counts the goroutines of the calling goroutine's synctest
// bubble, read from the headers of a full stack dump ("goroutine 7 [chan
// receive (durable), synctest bubble 1]:"). runtime.NumGoroutine counts the
// whole process, where a goroutine of another test or of the runtime coming
// or going is noise: a leak check on it failed CI with nothing leaked.
func bubbleGoroutines(t *testing.T) int {
	t.Helper()
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	// The first header is the caller's own.
	first, _, _ := strings.Cut(string(buf), "\n")
	_, bubble, ok := strings.Cut(first, "synctest bubble ")
	require.True(t, ok, "not inside a synctest bubble: %q", first)
	bubble = ", synctest bubble " + bubble // "…bubble 1]:", never bubble 10 for 1
	count := 0
	for line := range strings.Lines(string(buf)) {
		if strings.HasPrefix(line, "goroutine ") && strings.HasSuffix(strings.TrimSuffix(line, "\n"), bubble) {
			count++
		}
	}
	return count
}

func entries(v *Verifier) int {
	v.mu.RLock()
	defer v.mu.RUnlock()
	return len(v.entries)
}

func TestSingleFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		v := newTest(Config{})
		v.Dial = script(step{gate: gate}, step{})
		start(t, v)

		require.True(t, v.Enqueue(testJob))
		synctest.Wait() // the dial is in flight, held by gate
		require.True(t, v.Pending(testKey))
		require.False(t, v.Enqueue(testJob), "a second job for an in-flight key")
		require.Equal(t, 1.0, testutil.ToFloat64(v.m.refusedPending))
		other := testJob
		other.Key.Revision = "rev2"
		require.True(t, v.Pending(testKey) && !v.Pending(other.Key), "single flight is per key")

		close(gate)
		synctest.Wait() // the answer landed
		require.False(t, v.Pending(testKey))
		require.True(t, v.Enqueue(testJob), "allowed again once the answer is in")
	})
}

// TestForgetInterleaving is the sync hook's redial cycle: a Closed verdict
// inside the grace window is forgotten and redialed. A sync that arrives
// while that redial is in flight forgets again and tries to enqueue; the
// in-flight answer must still land (Forget drops only the stored result,
// and single flight holds across it), and the next Forget-and-dial must
// replace it.
func TestForgetInterleaving(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := make(chan struct{})
		v := newTest(Config{DialTimeout: time.Minute}) // the slow dial answers after 11s
		v.Dial = script(step{err: errRefused}, step{gate: slow, err: errRefused}, step{})
		start(t, v)
		t0 := time.Now()

		require.True(t, v.Enqueue(testJob))
		synctest.Wait()
		got, ok := v.Get(testKey)
		require.True(t, ok)
		require.Equal(t, shut8080, got.Ports)

		// Sync 1: closed inside grace → forget and redial (the slow dial).
		time.Sleep(10 * time.Second)
		v.Forget(testKey)
		require.True(t, v.Enqueue(testJob))
		synctest.Wait()

		// Sync 2 while the slow dial is in flight: forget again, try to redial.
		time.Sleep(10 * time.Second)
		v.Forget(testKey)
		_, ok = v.Get(testKey)
		require.False(t, ok, "Forget drops the stored result")
		require.True(t, v.Pending(testKey), "Forget leaves the dial in flight")
		require.False(t, v.Enqueue(testJob), "single flight holds across Forget")

		// The slow answer lands after the Forget and is what Get returns.
		time.Sleep(time.Second)
		close(slow)
		synctest.Wait()
		got, ok = v.Get(testKey)
		require.True(t, ok, "an answer in flight across a Forget still lands")
		slowShut := []PortResult{{Name: "http", Port: 8080, State: Closed, Err: errRefused.Error(), Latency: 11 * time.Second}}
		if d := cmp.Diff(Result{IP: "127.0.0.1", Ports: slowShut, CheckedAt: t0.Add(10 * time.Second)}, got); d != "" {
			t.Errorf("landed result (-want +got):\n%s", d)
		}

		// Sync 3: forget and dial afresh; the port is open by now.
		v.Forget(testKey)
		require.True(t, v.Enqueue(testJob))
		synctest.Wait()
		got, ok = v.Get(testKey)
		require.True(t, ok)
		if d := cmp.Diff(Result{IP: "127.0.0.1", Ports: open8080, CheckedAt: t0.Add(21 * time.Second)}, got); d != "" {
			t.Errorf("fresh result (-want +got):\n%s", d)
		}
	})
}

// TestQueueFull: with the one worker busy and QueueSize jobs accepted (the busy
// one and one waiting), Enqueue refuses at once; cancelling Run stops the busy
// dial, drops the queued job, and leaves no goroutine behind.
func TestQueueFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		baseline := bubbleGoroutines(t)
		v := newTest(Config{Workers: 1, QueueSize: 2})
		v.Dial = script(step{gate: make(chan struct{})}) // hangs until cancelled
		stop := start(t, v)
		k := func(name string) Key { return Key{"ns", name, "r"} }
		job := func(name string) Job { return Job{Key: k(name), IP: "127.0.0.1", Ports: []Port{{"", 80}}} }

		require.True(t, v.Enqueue(job("busy")))
		synctest.Wait() // the worker holds "busy"
		require.True(t, v.Enqueue(job("queued")))
		require.False(t, v.Enqueue(job("refused")), "queue full")
		require.False(t, v.Pending(k("refused")))
		require.Equal(t, 1.0, testutil.ToFloat64(v.m.refusedFull))
		require.Equal(t, 2.0, testutil.ToFloat64(v.m.enqueued))

		stop()
		require.False(t, v.Pending(k("busy")), "a cancelled dial is not pending")
		require.False(t, v.Pending(k("queued")), "a dropped job is not pending")
		_, ok := v.Get(k("busy"))
		require.False(t, ok, "an answer cut short by cancellation is not stored")
		require.False(t, v.Enqueue(job("late")), "refused after Run returned")
		require.Equal(t, 1.0, testutil.ToFloat64(v.m.refusedStop))
		synctest.Wait() // every goroutine of the bubble that can exit has exited
		require.Equal(t, baseline, bubbleGoroutines(t), "goroutines leaked")
	})
}

// TestRevisionReplacement: one entry per resource; a new revision's answer
// replaces the old one, and a late answer for an older job never replaces a
// newer one.
func TestRevisionReplacement(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		slow := make(chan struct{})
		v := newTest(Config{})
		v.Dial = script(step{}, step{gate: slow}, step{err: errRefused})
		start(t, v)
		rev2, rev3 := testJob, testJob
		rev2.Key.Revision, rev3.Key.Revision = "rev2", "rev3"

		require.True(t, v.Enqueue(testJob))
		synctest.Wait()
		require.True(t, v.Enqueue(rev2)) // slow: still in flight below
		synctest.Wait()
		require.True(t, v.Enqueue(rev3))
		synctest.Wait()
		got, ok := v.Get(rev3.Key)
		require.True(t, ok)
		require.Equal(t, shut8080, got.Ports)
		_, ok = v.Get(testKey)
		require.False(t, ok, "rev1's result was replaced")

		close(slow) // rev2 answers after rev3 did
		synctest.Wait()
		_, ok = v.Get(rev2.Key)
		require.False(t, ok, "a late answer for an older job is dropped")
		_, ok = v.Get(rev3.Key)
		require.True(t, ok)
		require.Equal(t, 1, entries(v), "one entry per resource")
		v.Forget(testKey) // another revision's Forget drops nothing
		require.Equal(t, 1, entries(v))
	})
}

func TestTTLEviction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := newTest(Config{TTL: time.Hour, Recheck: 24 * time.Hour})
		v.Dial = script(step{}, step{})
		start(t, v)
		unread := Job{Key: Key{"ns", "deleted", "r"}, IP: "127.0.0.1", Ports: []Port{{"", 1}}}
		require.True(t, v.Enqueue(testJob))
		require.True(t, v.Enqueue(unread))
		synctest.Wait()
		require.Equal(t, 2, entries(v))

		for range 3 { // reading keeps an entry alive past any one TTL
			time.Sleep(time.Hour - time.Nanosecond)
			_, ok := v.Get(testKey)
			require.True(t, ok)
		}
		require.Equal(t, 1, entries(v), "the unread entry was evicted")
		_, ok := v.Get(unread.Key)
		require.False(t, ok)

		time.Sleep(time.Hour)
		_, ok = v.Get(testKey)
		require.False(t, ok, "not read for a TTL: gone for Get at once")
		time.Sleep(time.Hour / 4)
		synctest.Wait()
		require.Zero(t, entries(v), "and freed within a quarter TTL")
	})
}

func TestStaleness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		v := newTest(Config{Recheck: 5 * time.Minute})
		v.Dial = script(step{}, step{err: errRefused})
		start(t, v)
		require.True(t, v.Enqueue(testJob))
		synctest.Wait()

		time.Sleep(5*time.Minute - time.Nanosecond)
		got, ok := v.Get(testKey)
		require.True(t, ok)
		require.False(t, got.Stale, "younger than Recheck")

		time.Sleep(time.Nanosecond)
		got, ok = v.Get(testKey)
		require.True(t, ok, "a stale result is still returned")
		require.True(t, got.Stale, "exactly Recheck old")
		require.Equal(t, open8080, got.Ports)

		require.True(t, v.Enqueue(testJob), "the caller redials while still using it")
		synctest.Wait()
		got, _ = v.Get(testKey)
		require.False(t, got.Stale)
		require.Equal(t, shut8080, got.Ports)
	})
}

func TestMetricsRegistered(t *testing.T) {
	reg := prometheus.NewRegistry()
	v := newTest(Config{Registerer: reg})
	v.m.dialOpen.Inc()
	v.m.refusedFull.Inc()
	v.m.latency.Observe(0.001)
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var names []string
	for _, mf := range mfs {
		names = append(names, mf.GetName())
		require.True(t, strings.HasPrefix(mf.GetName(), "stackdome_portcheck_"), mf.GetName())
	}
	want := []string{
		"stackdome_portcheck_cached_entries",
		"stackdome_portcheck_dial_duration_seconds",
		"stackdome_portcheck_dials_in_flight",
		"stackdome_portcheck_dials_total",
		"stackdome_portcheck_enqueue_refusals_total",
		"stackdome_portcheck_enqueued_total",
		"stackdome_portcheck_evicted_full_total",
		"stackdome_portcheck_queue_depth",
		"stackdome_portcheck_undialed_ports_total",
	}
	if d := cmp.Diff(want, names); d != "" {
		t.Errorf("metric names (-want +got):\n%s", d)
	}
	require.Panics(t, func() { newTest(Config{Registerer: reg}) }, "a second verifier on one registry")
}
