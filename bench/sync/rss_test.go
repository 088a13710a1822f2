package syncbench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRSS10k runs the real binary, syncs 10,000 distinct resources
// (each its own namespace, spec and children, 3 pods each, the dialed pod
// at 127.<1+i/256>.<i%256>.1 where nothing listens, so each gets a Closed
// verdict stored; the children cache fills to its bound) and reports the
// process's resident memory once the verifier holds a verdict for every one
// of them. Target: rss-MiB < 100.
func BenchmarkRSS10k(b *testing.B) {
	const n = 10_000
	var ports [3]int32
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		ports[i] = int32(ln.Addr().(*net.TCPAddr).Port)
		ln.Close() // a port nothing listens on, on any 127/8 address
	}
	p, err := Build(fixture, 3, ports, Unverified)
	if err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(b.TempDir(), "stackdome")
	build := exec.Command("go", "build", "-o", bin, "github.com/stackdome/stackdome")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		b.Fatalf("building stackdome: %v", err)
	}
	for range b.N {
		proc, hooksAddr, metricsAddr := startBinary(b, bin, "--dial-allow", "127.0.0.0/8", "--dial-allow-loopback")
		url, metricsURL := "http://"+hooksAddr, "http://"+metricsAddr
		c := newClient(clients)
		if _, err := post(c, url+"/sync", p.For(n)); err != nil { // warm up, outside the n
			b.Fatal(err)
		}
		base := vmRSS(b, proc.Pid)

		var next atomic.Int64
		var wg sync.WaitGroup
		var failed atomic.Value
		for range clients {
			wg.Go(func() {
				for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
					if _, err := post(c, url+"/sync", p.For(i)); err != nil {
						failed.Store(err)
						return
					}
				}
			})
		}
		wg.Wait()
		if err, _ := failed.Load().(error); err != nil {
			b.Fatal(err)
		}
		// Wait for the verifier to store every verdict: the cache is full.
		deadline := time.Now().Add(time.Minute)
		var cached float64
		for cached = metric(b, c, metricsURL, "stackdome_portcheck_cached_entries"); cached < n+1; cached = metric(b, c, metricsURL, "stackdome_portcheck_cached_entries") {
			if time.Now().After(deadline) {
				b.Fatalf("the verifier holds %v verdicts, want %d", cached, n+1)
			}
			time.Sleep(50 * time.Millisecond) // polling a condition, with a deadline
		}
		rss := vmRSS(b, proc.Pid)
		heap := metric(b, c, metricsURL, "go_memstats_heap_inuse_bytes")
		b.ReportMetric(float64(rss)/(1<<20), "rss-MiB")
		b.ReportMetric(float64(base)/(1<<20), "rss-at-start-MiB")
		b.ReportMetric(float64(rss-base)/n, "B/resource")
		b.ReportMetric(heap/(1<<20), "heap-inuse-MiB")
		b.ReportMetric(cached, "verdicts")
		proc.Signal(syscall.SIGTERM)
		proc.Wait()
	}
	b.ReportMetric(0, "ns/op")
}

// startBinary starts bin serve on loopback with args and returns its
// process, hooks address and metrics address, read from its "serving" log
// line. The process is killed at cleanup if still running.
func startBinary(tb testing.TB, bin string, args ...string) (proc *os.Process, hooks, metrics string) {
	return startBinaryEnv(tb, nil, bin, args...)
}

// startBinaryEnv is startBinary with env added to the benchmark's own
// environment.
func startBinaryEnv(tb testing.TB, env []string, bin string, args ...string) (proc *os.Process, hooks, metrics string) {
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0", "--error-pages-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--insecure-plain-http", "--drain-delay", "0s"}, args...)...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var line struct{ Msg, Hooks, Metrics string }
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "serving" {
			go io.Copy(io.Discard, out)
			return cmd.Process, line.Hooks, line.Metrics
		}
	}
	tb.Fatalf("stackdome exited before serving: %v", sc.Err())
	return nil, "", ""
}

// vmRSS is the resident set of pid in bytes, from /proc/<pid>/status.
func vmRSS(tb testing.TB, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb << 10
		}
	}
	tb.Fatal("no VmRSS")
	return 0
}

// metric reads one unlabelled sample from /metrics.
func metric(tb testing.TB, c *http.Client, url, name string) float64 {
	resp, err := c.Get(url + "/metrics")
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range bytes.Split(body, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte(name+" ")); ok {
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				tb.Fatal(err)
			}
			return f
		}
	}
	tb.Fatalf("no %s in /metrics", name)
	return 0
}
