package portcheck

import (
	"context"
	"net"
	"runtime"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// openDial connects every dial: each port reads Open.
func openDial(context.Context, string, string) (net.Conn, error) { return fakeConn{}, nil }

// TestMaxEntriesEvictsLeastRecentlyRead: a full cache evicts the least
// recently read eighth when a new resource's Result is stored, so the
// entries never pass MaxEntries however many resources are verified (on
// main, only the TTL bounded them: 10,000 resources in an hour held 10,000
// entries). What was read lately stays; an evicted resource reads as never
// verified — no Result, and a dial is accepted for it — never as verified.
func TestMaxEntriesEvictsLeastRecentlyRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const max = 16
		v := New(Config{MaxEntries: max, Allow: podCIDR})
		v.Dial = openDial
		start(t, v)
		land := func(j Job) {
			t.Helper()
			require.True(t, v.Enqueue(j))
			synctest.Wait()
			require.False(t, v.Pending(j.Key))
		}
		jobs := tenantJobs("t", max, 2)
		for _, j := range jobs {
			land(j)
			time.Sleep(time.Second) // orders the reads
		}
		require.Equal(t, max, entries(v))
		// Read the first two again: the next least recently read are 2 and 3.
		for _, j := range jobs[:2] {
			_, ok := v.Get(j.Key)
			require.True(t, ok)
		}
		time.Sleep(time.Second)

		newcomer := tenantJobs("u", 1, 2)[0]
		land(newcomer)
		require.Equal(t, max-max/8+1, entries(v), "a full cache sheds an eighth")
		require.Equal(t, float64(max/8), testutil.ToFloat64(v.m.evictedFull))
		for i, j := range jobs {
			_, ok := v.Get(j.Key)
			require.Equal(t, i >= 4 || i < 2, ok, "resource %d: evicted is the least recently read eighth, 2 and 3", i)
		}
		r, ok := v.Get(newcomer.Key)
		require.True(t, ok)
		require.True(t, r.AllOpen())

		// An evicted resource is dialed again as a new one would be.
		require.True(t, v.Enqueue(jobs[2]), "an evicted resource is not refused a dial")
		synctest.Wait()
		_, ok = v.Get(jobs[2].Key)
		require.True(t, ok)

		// However many resources come, never more than MaxEntries.
		for i := range 10 * max {
			land(tenantJobs("many"+strconv.Itoa(i), 1, 1)[0])
			require.LessOrEqual(t, entries(v), max)
		}
	})
}

// BenchmarkEntryBytes measures what one stored Result costs the heap: a
// resource of two ports, names as long as a typical app's. It reports
// B/entry, from which DefaultConfig's MaxEntries is sized.
func BenchmarkEntryBytes(b *testing.B) {
	const n = 20_000
	for b.Loop() {
		v := New(Config{MaxEntries: n, Allow: podCIDR})
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		ports := []PortResult{{Name: "http", Port: 8080, State: Open, Latency: time.Millisecond}, {Name: "metrics", Port: 9090, State: Closed, Err: errRefused.Error()}}
		now := time.Now()
		for i := range n {
			ns, name := "tenant-"+strconv.Itoa(i%100), "app-"+strconv.Itoa(i)+"-frontend"
			j := Job{Key: Key{ns, name, "7c9f5d6b8d"}, IP: "10.244." + strconv.Itoa(i/250) + "." + strconv.Itoa(i%250)}
			res := Result{IP: j.IP, Ports: append([]PortResult(nil), ports...), CheckedAt: now}
			storeTask(v, task{job: j, seq: uint64(i + 1)}, res)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/entry")
		runtime.KeepAlive(v)
	}
}
