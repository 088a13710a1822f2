//go:build e2e

package framework

// What the fleet benchmark reads of the processes it measures, from their
// own Prometheus metrics, read from the node: stackdome's hooks pods on the
// chart's metrics port, Metacontroller's pod on its --metrics-address
// (:9999 by default, which the production manifests keep; controller-runtime
// registers the process collector there).

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// ProcessFigures are a process's process_cpu_seconds_total and
// process_resident_memory_bytes.
type ProcessFigures struct {
	CPU float64 // seconds
	RSS float64 // bytes
}

// FiguresOf reads a process's CPU and RSS from its metrics; it fails the
// test when it exposes neither.
func (f *NodeFixture) FiguresOf(ip, port string) ProcessFigures {
	t := f.t
	t.Helper()
	s, _, err := f.readMetrics(t.Context(), ip, port)
	if err != nil {
		t.Fatal(err)
	}
	cpu, ok1 := s["process_cpu_seconds_total"]
	rss, ok2 := s["process_resident_memory_bytes"]
	if !ok1 || !ok2 {
		t.Fatalf("%s:%s/metrics has no process_cpu_seconds_total or process_resident_memory_bytes", ip, port)
	}
	return ProcessFigures{CPU: cpu, RSS: rss}
}

// HooksFigures are the chart's hooks pods' figures, and their syncs
// answered by code, summed over the pods.
type HooksFigures struct {
	Procs []ProcessFigures // one a pod, in the order of the pods
	Syncs map[string]float64
}

// CPU is the pods' CPU seconds, summed.
func (h HooksFigures) CPU() float64 {
	s := 0.0
	for _, p := range h.Procs {
		s += p.CPU
	}
	return s
}

// Answered is the syncs the pods answered, whatever the code.
func (h HooksFigures) Answered() float64 {
	s := 0.0
	for _, v := range h.Syncs {
		s += v
	}
	return s
}

// NotOK is the syncs answered with another code than 200 (a 429 holds a
// sync for a dial under way).
func (h HooksFigures) NotOK() float64 { return h.Answered() - h.Syncs["200"] }

// NotOKSince is the syncs answered with another code than 200 since
// before, by code: "none", or "1 (429: 1)".
func (h HooksFigures) NotOKSince(before HooksFigures) string {
	var codes []string
	for code, v := range h.Syncs {
		if n := v - before.Syncs[code]; code != "200" && n > 0 {
			codes = append(codes, fmt.Sprintf("%s: %.0f", code, n))
		}
	}
	if len(codes) == 0 {
		return "none"
	}
	slices.Sort(codes)
	return fmt.Sprintf("%.0f (%s)", h.NotOK()-before.NotOK(), strings.Join(codes, ", "))
}

// RSS is the pods' RSS, one a pod: "41 MiB + 39 MiB".
func (h HooksFigures) RSS() string {
	var parts []string
	for _, p := range h.Procs {
		parts = append(parts, MiB(p.RSS))
	}
	return strings.Join(parts, " + ")
}

// MiB formats bytes in whole MiB.
func MiB(bytes float64) string { return fmt.Sprintf("%.0f MiB", bytes/(1<<20)) }

// ReadHooks reads the figures of the hooks pods.
func (f *NodeFixture) ReadHooks(pods []Obj) HooksFigures {
	t := f.t
	t.Helper()
	h := HooksFigures{Syncs: map[string]float64{}}
	for _, p := range pods {
		h.Procs = append(h.Procs, f.FiguresOf(PodIP(p), HooksMetricsPort))
		_, syncs, err := f.readMetrics(t.Context(), PodIP(p), HooksMetricsPort)
		if err != nil {
			t.Fatal(err)
		}
		for c, v := range syncs {
			h.Syncs[c] += v
		}
	}
	return h
}

// RSSPeak samples a process's RSS from its metrics every 2 s until
// stopped, and keeps the highest: a peak as sampled, not the kernel's
// high-water mark.
type RSSPeak struct {
	mu   sync.Mutex
	peak float64
	stop func()
}

// SampleRSS starts sampling the RSS of the process serving metrics at
// ip:port (RSSPeak); it stops when the test ends, or earlier by stop.
func (f *NodeFixture) SampleRSS(ip, port string) *RSSPeak {
	t := f.t
	r := &RSSPeak{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	r.stop = func() { cancel(); <-done }
	t.Cleanup(r.stop)
	go func() {
		defer close(done)
		for {
			if s, _, err := f.readMetrics(ctx, ip, port); err == nil {
				r.mu.Lock()
				r.peak = max(r.peak, s["process_resident_memory_bytes"])
				r.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(2 * time.Second):
			}
		}
	}()
	return r
}

// Value is the highest RSS sampled so far.
func (r *RSSPeak) Value() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peak
}
