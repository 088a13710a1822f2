//go:build e2e

package node

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// What the fleet benchmark reads of the processes it measures, from their
// own Prometheus metrics, read from the node: stackdome's hooks pods on the
// chart's metrics port, Metacontroller's pod on its --metrics-address
// (:9999 by default, which the production manifests keep; controller-runtime
// registers the process collector there). And Metacontroller's flags,
// raised by patching its StatefulSet.

// Ports of the metrics the fleet reads.
const (
	hooksMetricsPort = "8081"
	mcMetricsPort    = "9999"
)

// processFigures are a process's process_cpu_seconds_total and
// process_resident_memory_bytes.
type processFigures struct {
	cpu float64 // seconds
	rss float64 // bytes
}

// readMetrics reads the unlabeled samples of names, and
// stackdome_hook_requests_total{hook="sync"} summed by code (in syncs),
// from http://ip:port/metrics.
func readMetrics(f *framework.NodeFixture, ctx context.Context, ip, port string) (samples map[string]float64, syncs map[string]float64, err error) {
	body, err := f.GetFromNode(ctx, "http://"+net.JoinHostPort(ip, port)+"/metrics", "")
	if err != nil {
		return nil, nil, fmt.Errorf("metrics of %s: %w", ip, err)
	}
	samples, syncs = map[string]float64{}, map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) < 2 || strings.HasPrefix(line, "#") {
			continue
		}
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			continue
		}
		switch {
		case !strings.Contains(f[0], "{"):
			samples[f[0]] = v
		case strings.HasPrefix(line, "stackdome_hook_requests_total{") && strings.Contains(line, `hook="sync"`):
			_, rest, _ := strings.Cut(line, `code="`)
			code, _, _ := strings.Cut(rest, `"`)
			syncs[code] += v
		}
	}
	return samples, syncs, sc.Err()
}

// figuresOf reads a process's CPU and RSS from its metrics; it fails the
// test when it exposes neither.
func figuresOf(t *testing.T, ip, port string) processFigures {
	t.Helper()
	f := framework.NewNodeFixture(t)
	s, _, err := readMetrics(f, t.Context(), ip, port)
	if err != nil {
		t.Fatal(err)
	}
	cpu, ok1 := s["process_cpu_seconds_total"]
	rss, ok2 := s["process_resident_memory_bytes"]
	if !ok1 || !ok2 {
		t.Fatalf("%s:%s/metrics has no process_cpu_seconds_total or process_resident_memory_bytes", ip, port)
	}
	return processFigures{cpu: cpu, rss: rss}
}

// hooksFigures are the chart's hooks pods' figures, and their syncs
// answered by code, summed over the pods.
type hooksFigures struct {
	procs []processFigures // one a pod, in the order of the pods
	syncs map[string]float64
}

func (h hooksFigures) cpu() float64 {
	s := 0.0
	for _, p := range h.procs {
		s += p.cpu
	}
	return s
}

func (h hooksFigures) answered() float64 {
	s := 0.0
	for _, v := range h.syncs {
		s += v
	}
	return s
}

// notOK is the syncs answered with another code than 200 (a 429 holds a
// sync for a dial under way).
func (h hooksFigures) notOK() float64 { return h.answered() - h.syncs["200"] }

func (h hooksFigures) rss() string {
	var parts []string
	for _, p := range h.procs {
		parts = append(parts, mib(p.rss))
	}
	return strings.Join(parts, " + ")
}

func mib(bytes float64) string { return fmt.Sprintf("%.0f MiB", bytes/(1<<20)) }

// readHooks reads the figures of the hooks pods.
func readHooks(t *testing.T, pods []obj) hooksFigures {
	t.Helper()
	f := framework.NewNodeFixture(t)
	h := hooksFigures{syncs: map[string]float64{}}
	for _, p := range pods {
		h.procs = append(h.procs, figuresOf(t, framework.PodIP(p), hooksMetricsPort))
		_, syncs, err := readMetrics(f, t.Context(), framework.PodIP(p), hooksMetricsPort)
		if err != nil {
			t.Fatal(err)
		}
		for c, v := range syncs {
			h.syncs[c] += v
		}
	}
	return h
}

// rssPeak samples a process's RSS from its metrics every 2 s until
// stopped, and keeps the highest: a peak as sampled, not the kernel's
// high-water mark.
type rssPeak struct {
	mu   sync.Mutex
	peak float64
	stop func()
}

func sampleRSS(t *testing.T, ip, port string) *rssPeak {
	f := framework.NewNodeFixture(t)
	r := &rssPeak{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	r.stop = func() { cancel(); <-done }
	t.Cleanup(r.stop)
	go func() {
		defer close(done)
		for {
			if s, _, err := readMetrics(f, ctx, ip, port); err == nil {
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

func (r *rssPeak) value() float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.peak
}
