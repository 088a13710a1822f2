package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// chartPagesMemoryLimit is the memory limit of the chart's error-page
// Deployment (values.yaml errorPages.resources.limits.memory), its
// GOMEMLIMIT too.
const chartPagesMemoryLimit = 128 << 20

// startServe runs the built binary with the chart's limits (GOMAXPROCS=1,
// GOMEMLIMIT at 256Mi) and args on loopback, and returns the addresses of
// its "serving" line and its pid; it is killed at cleanup.
func startServe(tb testing.TB, bin string, args ...string) (map[string]any, int) {
	return startServeLimited(tb, bin, chartMemoryLimit, args...)
}

// startServeLimited is startServe with GOMEMLIMIT at memLimit.
func startServeLimited(tb testing.TB, bin string, memLimit int, args ...string) (map[string]any, int) {
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0", "--error-pages-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--insecure-plain-http",
		"--dial-allow", "127.0.0.0/8", "--drain-delay", "0s"}, args...)...)
	cmd.Env = append(os.Environ(), "GOMAXPROCS=1", "GOMEMLIMIT="+strconv.Itoa(memLimit))
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
	return serving, cmd.Process.Pid
}

// BenchmarkPagesUnderSyncFlood: the error pages' latency while the hooks are
// flooded with large syncs (4 clients, each posting 5,000-pod syncs of
// 2.8 MB back to back, as many as the hook memory budget takes), with the pages in
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
				s, _ := startServe(b, bin)
				hooksAddr, pagesAddr = s["hooks"].(string), s["errorPages"].(string)
			case "own-process":
				hooks, _ := startServe(b, bin, "--pages=false")
				pages, _ := startServe(b, bin, "--hooks=false")
				hooksAddr, pagesAddr = hooks["hooks"].(string), pages["errorPages"].(string)
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

// TestConnectionFloodsLeaveRSSUnderTheChartLimit runs the chart's page
// server (`serve --hooks=false`, GOMAXPROCS=1, GOMEMLIMIT at the page pods'
// 128Mi limit, default flags) and floods its page port with connections alone,
// while a well-behaved client (Go's Transport, kept alive, as Traefik's)
// fetches a page back to back:
//
//   - "idle": 18,000 connections, each fetching one page and then kept
//     alive, idle;
//   - "63 KB headers": 3,000 connections each sending a header block of
//     63 KB that never ends;
//   - "15 KB headers": the same with 15 KB, just under the pages' header
//     limit, the dearest header block that is not refused;
//   - "hooks: idle": the idle flood against the hooks' Deployment
//     (`serve --pages=false`, GOMEMLIMIT at its 256Mi limit), the client
//     asking for /healthz.
//
// The peak RSS (VmHWM, over the flood, 3 s of holding it and 5 s after it
// closed) stays under the pods' limit and every request of the
// well-behaved client is answered. It logs the peak, the RSS 5 s after the
// flood closed, and the client's p50, p99 and slowest page while it
// lasted.
func TestConnectionFloodsLeaveRSSUnderTheChartLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 18,000 connections")
	}
	raiseFileLimit(t, 18_000+1_000)
	bin := buildBinary(t)
	extraArgs := strings.Fields(os.Getenv("STACKDOME_FLOOD_ARGS")) // to try other limits
	for _, tc := range []struct {
		name  string
		hooks bool // flood the hooks' Deployment (--pages=false, 256Mi) instead
		conns int
		open  func(c net.Conn) error // what each flood connection sends
	}{
		{"idle", false, 18_000, keptAlive("/_errors/503")},
		{"63 KB headers", false, 3_000, unfinishedHeader(63_000)},
		{"15 KB headers", false, 3_000, unfinishedHeader(15_000)},
		{"hooks: idle", true, 18_000, keptAlive("/healthz")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem, args, port, path, status := chartPagesMemoryLimit, []string{"--hooks=false"}, "errorPages", "/_errors/503", http.StatusServiceUnavailable
			if tc.hooks {
				mem, args, port, path, status = chartMemoryLimit, []string{"--pages=false"}, "hooks", "/healthz", http.StatusOK
			}
			serving, pid := startServeLimited(t, bin, mem, append(args, extraArgs...)...)
			addr := serving[port].(string)
			page := "http://" + addr + path

			ctx, stopClient := context.WithCancel(context.Background())
			var lat []time.Duration
			var failed []error
			clientDone := make(chan struct{})
			go func() {
				defer close(clientDone)
				client := &http.Client{Timeout: hangDeadline}
				for ctx.Err() == nil {
					start := time.Now()
					resp, err := client.Get(page)
					if err == nil {
						_, err = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						if err == nil && resp.StatusCode != status {
							err = fmt.Errorf("status %d", resp.StatusCode)
						}
					}
					if err != nil {
						failed = append(failed, err)
						continue
					}
					lat = append(lat, time.Since(start))
				}
			}()

			conns := flood(t, addr, tc.conns, tc.open)
			// The server reads what was written meanwhile; the client keeps
			// fetching.
			time.Sleep(3 * time.Second)
			stopClient()
			<-clientDone
			for _, c := range conns {
				c.Close()
			}
			time.Sleep(5 * time.Second) // what the runtime gives back meanwhile
			after, peak := currentRSS(t, pid), peakRSS(t, pid)

			slices.Sort(lat)
			q := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
			t.Logf("%d connections: peak RSS %.1f MiB (the pods' limit %d MiB: margin %.1f MiB), %.1f MiB 5 s after they closed; the client's %d requests: p50 %s, p99 %s, slowest %s, %d failed",
				tc.conns, mib(peak), mem>>20, mib(int64(mem)-peak), mib(after), len(lat), q(0.5), q(0.99), lat[len(lat)-1], len(failed))
			require.Less(t, peak, int64(mem), "connections alone took the peak RSS past the pods' memory limit")
			// The one loss limitConns allows (connlimit.go): a fresh
			// connection closed for a flood's in the moment between its
			// request arriving and being read, which the Transport does
			// not resend. Nothing else, and rarely: at most five requests
			// in a thousand. Under -race on 2 cores it lost one in 4,586
			// on a cold machine, and 0, 0, 2 and 4 of about 3,000 (up to
			// 1.3 in a thousand) in four runs on 2026-12-06, where a
			// bound of one in a thousand failed the fourth; a limiter that
			// reclaimed newest first, or served no kept-alive client,
			// loses most.
			for _, err := range failed {
				require.True(t, lostSlot(err), "the well-behaved client's page failed otherwise than by a lost slot: %v", err)
			}
			require.LessOrEqual(t, len(failed)*1000, 5*(len(lat)+len(failed)), "the well-behaved client lost more than five pages in a thousand: %v", failed)
		})
	}
}

// keptAlive is a flood connection's opening: one GET of path, answered,
// and the connection kept.
func keptAlive(path string) func(net.Conn) error {
	return func(c net.Conn) error {
		if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: flood\r\nAccept: text/html\r\n\r\n"); err != nil {
			return err
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
}

// unfinishedHeader is a flood connection's opening: a page request whose
// header block of size bytes never ends. A server that refuses it early
// (431, a reset) is no error.
func unfinishedHeader(size int) func(net.Conn) error {
	line := "X-Pad: " + strings.Repeat("a", 1000) + "\r\n"
	block := "GET /_errors/503 HTTP/1.1\r\nHost: flood\r\n" + strings.Repeat(line, size/len(line))
	return func(c net.Conn) error {
		c.Write([]byte(block))
		return nil
	}
}

// flood opens n connections to addr, 64 at a time, each running open, and
// returns those still open; it fails the test only when not one could be
// opened. A dial waits up to 10 s (a full backlog holds it).
func flood(t *testing.T, addr string, n int, open func(net.Conn) error) []net.Conn {
	t.Helper()
	var mu sync.Mutex
	var conns []net.Conn
	var dialErrs int
	var firstErr error
	work := make(chan struct{})
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			d := net.Dialer{Timeout: 10 * time.Second}
			for range work {
				c, err := d.Dial("tcp", addr)
				if err == nil {
					c.SetDeadline(time.Now().Add(10 * time.Second))
					err = open(c)
					c.SetDeadline(time.Time{})
				}
				mu.Lock()
				if c != nil {
					conns = append(conns, c)
				}
				if err != nil {
					dialErrs++
					if firstErr == nil {
						firstErr = err
					}
				}
				mu.Unlock()
			}
		})
	}
	for range n {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	t.Logf("flood: %d connections opened, %d answered with an error or closed early (first: %v)", n, dialErrs, firstErr)
	require.NotEmpty(t, conns)
	return conns
}

// raiseFileLimit raises the test process's open-file soft limit to at least
// n, up to its hard limit; the server, started later, inherits it.
func raiseFileLimit(t *testing.T, n uint64) {
	var lim syscall.Rlimit
	require.NoError(t, syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim))
	if lim.Cur < n {
		lim.Cur = min(n, lim.Max)
		require.NoError(t, syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim))
	}
	if lim.Cur < n {
		t.Skipf("open-file limit %d, want %d", lim.Cur, n)
	}
}

// currentRSS is the process's resident set now (VmRSS), in bytes.
func currentRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmRSS")
	return 0
}

// lostSlot says whether a request failed as one whose fresh connection the
// server closed before reading it: closed or reset, with no answer.
func lostSlot(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "server closed idle connection") || strings.Contains(msg, "connection reset by peer") || strings.HasSuffix(msg, ": EOF")
}
