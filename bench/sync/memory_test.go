package syncbench

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// BenchmarkSyncMemory: the memory one sync costs, per request byte and per
// pod, at realistic pods (full managedFields, 5.3 KB each) of 50, 500 and
// 2,000 replicas. It reports the bytes allocated per request byte
// (alloc-B/req-B) and per pod (alloc-B/pod), read with the collector off:
// the most one sync can hold at once, an upper bound of its peak heap.
// docs/performance.md sizes --max-body, --hook-memory and the chart's
// memory limit from them.
func BenchmarkSyncMemory(b *testing.B) {
	for _, pods := range []int{50, 500, 2000} {
		b.Run(fmt.Sprintf("pods=%d", pods), func(b *testing.B) {
			p, err := Build(fixture, pods, [3]int32{18080, 19090, 19901}, Unverified)
			if err != nil {
				b.Fatal(err)
			}
			req := body(p)
			h := stackdome(b)
			h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(req)))
			var allocs uint64
			n := 0
			for b.Loop() {
				a0 := allocatedNow()
				old := setGC(-1)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(req)))
				a1 := allocatedNow()
				setGC(old)
				if rec.Code != http.StatusOK {
					b.Fatalf("%d %.200s", rec.Code, rec.Body)
				}
				allocs += a1 - a0
				n++
			}
			per := float64(allocs) / float64(n)
			b.ReportMetric(per/float64(len(req)), "alloc-B/req-B")
			b.ReportMetric(per/float64(pods), "alloc-B/pod")
			b.ReportMetric(float64(len(req)), "req-B")
		})
	}
}

// allocatedNow is the heap allocated so far by the process.
func allocatedNow() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// setGC sets GOGC (-1: off) and returns the old value; turning it back on
// collects what the sync left.
func setGC(percent int) int {
	old := debug.SetGCPercent(percent)
	if percent >= 0 {
		runtime.GC()
	}
	return old
}
