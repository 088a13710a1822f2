package observed

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestCacheIsBounded: however many distinct requests a replica decodes, the
// Cache holds at most its bound, and what it counts is what it holds; an
// object over a sixty-fourth of the bound is decoded but never kept.
func TestCacheIsBounded(t *testing.T) {
	const max = 256 << 10
	c := NewCache(max)
	for i := range 2000 {
		body := fmt.Appendf(nil, `{"parent":{"metadata":{"name":"app-%d","namespace":"ns"},"spec":{"type":"Service","image":"x"}},`+
			`"children":{"Deployment.apps/v1":{"ns/app-%d":{"metadata":{"name":"app-%d"},"status":{"readyReplicas":%d}}}},`+
			`"related":{"Pod.v1":{"ns/app-%d-a":{"metadata":{"name":"app-%d-a"},"status":{"podIP":"10.0.0.1"}}}}}`, i, i, i, i, i, i)
		var r Request
		if err := Decode(body, &r, c, Budget{}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.DecodeParent(); err != nil {
			t.Fatal(err)
		}
		if c.Size() > max {
			t.Fatalf("after %d requests the Cache holds %d bytes, over its bound of %d", i+1, c.Size(), max)
		}
	}
	c.mu.Lock()
	total := 0
	for _, e := range c.entries {
		total += e.cost
	}
	n, size := len(c.entries), c.size
	c.mu.Unlock()
	if total != size {
		t.Errorf("the Cache counts %d bytes, holds %d", size, total)
	}
	if size < max/2 {
		t.Errorf("the Cache holds %d bytes of %d after 2,000 distinct requests: it evicts more than it must", size, max)
	}

	huge := `{"parent":{"metadata":{"name":"big"},"spec":{"image":"` + strings.Repeat("x", max/64) + `"}}}`
	var r Request
	if err := Decode([]byte(huge), &r, c, Budget{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.DecodeParent(); err != nil {
		t.Fatal(err)
	}
	if c.Len() > n+1 { // the body's entry, small; not the parent
		t.Errorf("a parent of %d bytes was kept: %d entries, were %d", len(huge), c.Len(), n)
	}
}

// TestCacheCountsWhatItHolds: the Cache's size (heapSize) is what its
// values take of the heap, within some tens of percent, for the requests
// Metacontroller sends: its bound is a bound of memory.
func TestCacheCountsWhatItHolds(t *testing.T) {
	files, err := filepath.Glob("../../../testdata/sync/*.request.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden requests: %v", err)
	}
	var bodies [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
	}
	c := NewCache(1 << 30)
	for _, b := range bodies {
		var r Request
		if err := Decode(b, &r, c, Budget{}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.DecodeParent(); err != nil {
			t.Fatal(err)
		}
	}
	// What the heap holds with the Cache, and without it.
	var with, without runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&with)
	counted, entries := c.Size(), c.Len()
	c = nil
	runtime.GC()
	runtime.ReadMemStats(&without)
	held := int(with.HeapAlloc) - int(without.HeapAlloc)
	ratio := float64(held) / float64(counted)
	t.Logf("%d requests: the Cache counts %d bytes in %d entries and holds %d of the heap (%.2f×)", len(bodies), counted, entries, held, ratio)
	if ratio < 0.6 || ratio > 1.5 {
		t.Errorf("the Cache holds %.2f× what it counts", ratio)
	}
	runtime.KeepAlive(bodies)
}
