package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// startServe runs the built binary with the chart's limits (GOMAXPROCS=1,
// GOMEMLIMIT at 256Mi) and args on loopback, and returns the addresses of
// its "serving" line; it is killed at cleanup.
func startServe(tb testing.TB, bin string, args ...string) map[string]any {
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0", "--error-pages-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--insecure-plain-http",
		"--dial-allow", "127.0.0.0/8", "--drain-delay", "0s"}, args...)...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "GOMEMLIMIT="+strconv.Itoa(chartMemoryLimit))
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := logLines(out)
	var serving map[string]any
	for m := range lines {
		if m["msg"] == "serving" {
			serving = m
			break
		}
	}
	if serving == nil {
		tb.Fatal("no serving line")
	}
	go func() {
		for range lines {
		}
	}()
	return serving
}

// BenchmarkPagesUnderSyncFlood: the error pages' latency while the hooks are
// flooded with large syncs (4 clients, each posting 5,000-pod syncs of
// 2.8 MB back to back, as many as --max-in-flight takes), with the pages in
// the hooks' process ("one-process", the chart before issue 25) and in a
// process of their own ("own-process", the chart's error-page Deployment),
// each process with the chart's limits. One op is a window: pages fetched
// back to back, one at a time, from the first sync answered until 8 more
// are. It reports the pages' p50 and p99 over every window and the pages
// fetched per sync answered (pages/sync). "idle", with nothing flooded,
// fetches 2,000 pages an op: the floor.
func BenchmarkPagesUnderSyncFlood(b *testing.B) {
	bin := buildBinary(b)
	big := podsRequest(b, 5000, 500)
	for _, mode := range []string{"idle", "one-process", "own-process"} {
		b.Run(mode, func(b *testing.B) {
			var hooksAddr, pagesAddr string
			switch mode {
			case "idle", "one-process":
				s := startServe(b, bin)
				hooksAddr, pagesAddr = s["hooks"].(string), s["errorPages"].(string)
			case "own-process":
				hooksAddr = startServe(b, bin, "--pages=false")["hooks"].(string)
				pagesAddr = startServe(b, bin, "--hooks=false")["errorPages"].(string)
			}
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			var mu sync.Mutex
			syncs := 0
			if mode != "idle" {
				for range 4 {
					wg.Go(func() {
						client := &http.Client{}
						for ctx.Err() == nil {
							req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+hooksAddr+"/sync", bytes.NewReader(big))
							resp, err := client.Do(req)
							if err != nil {
								continue
							}
							io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
							if resp.StatusCode == http.StatusOK {
								mu.Lock()
								syncs++
								mu.Unlock()
							}
						}
					})
				}
			}
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			page := "http://" + pagesAddr + "/_errors/503"
			get := func() time.Duration {
				start := time.Now()
				resp, err := client.Get(page)
				if err != nil {
					b.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusServiceUnavailable {
					b.Fatalf("page answered %d", resp.StatusCode)
				}
				return time.Since(start)
			}
			get()
			answered := func() int { mu.Lock(); defer mu.Unlock(); return syncs }
			var lat []time.Duration
			windows := 0
			for b.Loop() {
				if mode == "idle" {
					for range 2000 {
						lat = append(lat, get())
					}
					continue
				}
				for answered() == 0 {
					get() // the flood's first sync is under way: not yet measured
				}
				start := answered()
				for answered() < start+8 {
					lat = append(lat, get())
				}
				windows++
			}
			cancel()
			wg.Wait()
			slices.Sort(lat)
			q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
			b.ReportMetric(q(0.5), "p50-ms")
			b.ReportMetric(q(0.99), "p99-ms")
			if windows > 0 {
				b.ReportMetric(float64(len(lat))/float64(8*windows), "pages/sync")
			}
		})
	}
}
