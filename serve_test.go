package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
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

	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/hooks"
	"github.com/stackdome/stackdome/portcheck"
)

// The tests here hold the servers to their limits with real sockets on
// loopback: slow clients are cut off without delaying anyone else, a
// SIGTERM drains before it stops, and no sync waits for a dial. Deadlines
// in them only catch hangs; each assertion is about order, not speed.

// hangDeadline bounds waits that only a hang would exceed.
const hangDeadline = 20 * time.Second

// logLines reads the JSON log lines of a server into a channel.
func logLines(r io.Reader) <-chan map[string]any {
	ch := make(chan map[string]any, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				ch <- m
			}
		}
	}()
	return ch
}

// awaitLog returns the first line whose msg is msg.
func awaitLog(t *testing.T, lines <-chan map[string]any, msg string) map[string]any {
	t.Helper()
	timeout := time.After(hangDeadline)
	for {
		select {
		case m, ok := <-lines:
			if !ok {
				t.Fatalf("the server stopped logging before %q", msg)
			}
			if m["msg"] == msg {
				return m
			}
		case <-timeout:
			t.Fatalf("no %q log line", msg)
		}
	}
}

// startInProcess runs `stackdome serve` in this process with args on
// loopback and returns its hooks address; it stops at cleanup.
func startInProcess(t *testing.T, args ...string) string {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--listen", "127.0.0.1:0", "--error-pages-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--insecure-plain-http", "--drain-delay", "0s", "--dial-allow", "127.0.0.0/8", "--dial-allow-loopback"}, args...), nil, pw, io.Discard)
		pw.Close()
	}()
	lines := logLines(pr)
	addr := awaitLog(t, lines, "serving")["hooks"].(string)
	go func() {
		for range lines {
		}
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(hangDeadline):
			t.Error("serve did not stop")
		}
	})
	return addr
}

// TestSlowlorisIsCutOff: 300 connections trickle a header that never ends,
// one byte at a time, past --max-conns (128). A normal sync sent meanwhile
// is answered before the server has cut off any but those over the cap,
// whose slots went to newer connections (nothing queues behind slow
// clients), and then --read-header-timeout closes every one.
func TestSlowlorisIsCutOff(t *testing.T) {
	const slow, maxConns = 300, 128
	addr := startInProcess(t, "--read-header-timeout", "2s", "--max-conns", strconv.Itoa(maxConns))
	body, err := os.ReadFile("testdata/sync/serving.request.json")
	require.NoError(t, err)
	want, err := os.ReadFile("testdata/sync/serving.response.json")
	require.NoError(t, err)

	var closed atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	defer close(stop)
	started := make(chan struct{}, slow)
	for i := range slow {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		wg.Go(func() {
			// The server closing the connection ends this read: EOF, a
			// reset, or a 408 and then EOF.
			io.Copy(io.Discard, c)
			closed.Add(1)
		})
		go func() {
			fmt.Fprintf(c, "POST /sync HTTP/1.1\r\nHost: stackdome\r\nX-Slow-%d: ", i)
			started <- struct{}{}
			tick := time.NewTicker(100 * time.Millisecond) // the trickle's pace
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := c.Write([]byte("a")); err != nil {
						return
					}
				}
			}
		}()
	}
	for range slow {
		<-started
	}

	resp, err := http.Post("http://"+addr+"/sync", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	cutBefore := closed.Load()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(got))
	require.JSONEq(t, string(want), string(got))
	// The cap's reclaims: the slow connections over it, and one for the
	// normal request.
	require.LessOrEqual(t, cutBefore, int64(slow-maxConns+1), "the normal request was answered only after slow connections were cut off")

	waited := make(chan struct{})
	go func() { wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-time.After(hangDeadline):
		t.Fatalf("the server cut off %d of %d slow connections", closed.Load(), slow)
	}
	require.EqualValues(t, slow, closed.Load(), "every slow connection is closed by the server")
	t.Logf("the server closed %d of %d slowloris connections", closed.Load(), slow)
}

// TestHugeHeaderIsRefused: a header block over --max-header-bytes gets
// 431 from net/http before any handler runs, and the server still answers.
func TestHugeHeaderIsRefused(t *testing.T) {
	addr := startInProcess(t, "--max-header-bytes", "4096")
	req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/healthz", nil)
	require.NoError(t, err)
	req.Header.Set("X-Huge", strings.Repeat("a", 64<<10))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
	resp, err = http.Get("http://" + addr + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

var binary struct {
	once sync.Once
	path string
	err  error
}

// buildBinary builds stackdome once per test run.
func buildBinary(t testing.TB) string {
	binary.once.Do(func() {
		dir, err := os.MkdirTemp("", "stackdome-test-")
		if err != nil {
			binary.err = err
			return
		}
		binary.path = filepath.Join(dir, "stackdome")
		out, err := exec.Command("go", "build", "-o", binary.path, ".").CombinedOutput()
		if err != nil {
			binary.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, binary.err)
	return binary.path
}

// TestGracefulShutdown runs the real binary and sends it SIGTERM while a
// sync is in flight (its body half sent): /readyz turns 503 while the
// listeners still accept, then new connections are refused, the in-flight
// sync still gets its full answer, the verifier stops, and the process exits
// 0. A second run whose in-flight request never finishes shows the exit
// comes by --shutdown-timeout at the latest.
func TestGracefulShutdown(t *testing.T) {
	bin := buildBinary(t)
	body, err := os.ReadFile("testdata/sync/serving.request.json")
	require.NoError(t, err)
	want, err := os.ReadFile("testdata/sync/serving.response.json")
	require.NoError(t, err)

	start := func(t *testing.T, args ...string) (*exec.Cmd, <-chan map[string]any, string) {
		cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0", "--error-pages-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--insecure-plain-http",
			"--dial-allow", "127.0.0.0/8", "--dial-allow-loopback", "--read-timeout", "60s"}, args...)...)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = new(syncBuffer)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		lines := logLines(out)
		return cmd, lines, awaitLog(t, lines, "serving")["hooks"].(string)
	}
	// inFlight opens a sync whose body is half sent, once a handler is
	// reading it: the server answers "100 Continue" on the handler's first
	// read of the body, so the request is in flight, not in the backlog.
	inFlight := func(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		fmt.Fprintf(c, "POST /sync HTTP/1.1\r\nHost: stackdome\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", len(body))
		r := bufio.NewReader(c)
		cont, err := http.ReadResponse(r, nil)
		require.NoError(t, err)
		require.Equal(t, http.StatusContinue, cont.StatusCode)
		_, err = c.Write(body[:len(body)/2])
		require.NoError(t, err)
		return c, r
	}
	get := func(addr, path string) (int, error) {
		c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		resp, err := c.Get("http://" + addr + path)
		if err != nil {
			return 0, err
		}
		resp.Body.Close()
		return resp.StatusCode, nil
	}
	// awaitRefused waits until the listener is closed: a new connection is
	// refused.
	awaitRefused := func(t *testing.T, addr string) {
		deadline := time.Now().Add(hangDeadline)
		for {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				require.ErrorIs(t, err, syscall.ECONNREFUSED)
				return
			}
			c.Close()
			require.True(t, time.Now().Before(deadline), "still accepting connections")
			time.Sleep(20 * time.Millisecond) // polling a condition, with a deadline
		}
	}

	t.Run("drain, finish in-flight, stop", func(t *testing.T) {
		cmd, lines, addr := start(t, "--drain-delay", "1s", "--shutdown-timeout", "20s")
		code, err := get(addr, "/readyz")
		require.NoError(t, err)
		require.Equal(t, 200, code)
		c, r := inFlight(t, addr)

		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		awaitLog(t, lines, "draining")
		code, err = get(addr, "/readyz")
		require.NoError(t, err, "during the drain new connections are still accepted")
		require.Equal(t, http.StatusServiceUnavailable, code, "/readyz turns 503 first")
		code, err = get(addr, "/healthz")
		require.NoError(t, err)
		require.Equal(t, 200, code, "draining is not dying")

		awaitRefused(t, addr)
		_, err = c.Write(body[len(body)/2:])
		require.NoError(t, err)
		resp, err := http.ReadResponse(r, nil)
		require.NoError(t, err, "the in-flight sync is answered after the listeners closed")
		got, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, 200, resp.StatusCode, string(got))
		require.JSONEq(t, string(want), string(got))

		awaitLog(t, lines, "stopped") // logged after the verifier's Run returned
		require.NoError(t, cmd.Wait(), "a clean stop exits 0")
	})

	t.Run("a request that never finishes is cut at the timeout", func(t *testing.T) {
		cmd, lines, addr := start(t, "--drain-delay", "0s", "--shutdown-timeout", "1s")
		inFlight(t, addr) // never finished
		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "an unfinished request makes the stop unclean: %v", err)
			require.Equal(t, 1, ee.ExitCode())
		case <-time.After(hangDeadline):
			t.Fatal("stackdome did not exit after --shutdown-timeout")
		}
		for range lines {
		}
	})

	t.Run("a second signal during the drain exits at once", func(t *testing.T) {
		cmd, lines, addr := start(t, "--drain-delay", "1h", "--shutdown-timeout", "1h")
		inFlight(t, addr) // never finished: a clean stop would wait for it
		require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
		awaitLog(t, lines, "draining")
		require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		select {
		case err := <-exited:
			var ee *exec.ExitError
			require.True(t, errors.As(err, &ee), "a second signal is not a clean stop: %v", err)
			require.Equal(t, 128+int(syscall.SIGINT), ee.ExitCode())
		case <-time.After(hangDeadline):
			t.Fatal("stackdome kept draining after a second signal")
		}
		require.Equal(t, "stackdome: interrupt during the stop that terminated began: exiting at once, cutting what is in flight\n", cmd.Stderr.(*syncBuffer).String())
		for range lines {
		}
	})
}

// syncBuffer is a bytes.Buffer that a process's output may fill while a
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestSyncNeverWaitsForADial: with every dial of the verifier hanging until
// the test ends and its queue saturated, 200 syncs of distinct resources —
// each wanting a dial — are all answered 200 while not one dial has
// returned. A sync's time is independent of the verifier's; the benchmark
// BenchmarkSyncWhileDialsHang (bench/sync) reports its p100.
func TestSyncNeverWaitsForADial(t *testing.T) {
	release := make(chan struct{})
	var dials, returned atomic.Int64
	v := portcheck.New(portcheck.Config{Workers: 2, QueueSize: 8, DialTimeout: time.Hour, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, AllowLoopback: true})
	v.Dial = func(ctx context.Context, _, _ string) (net.Conn, error) {
		dials.Add(1)
		defer returned.Add(1)
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil, errors.New("released")
	}
	srv := httptest.NewServer(hooks.Router(&hooks.Handler{Verifier: v}, nil, nil))
	defer srv.Close() // after the dials are released: a handler stuck on one would block it
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { v.Run(ctx); close(done) }()
	defer func() { close(release); cancel(); <-done }()
	body, err := os.ReadFile("testdata/sync/serving.request.json")
	require.NoError(t, err)
	client := &http.Client{Timeout: hangDeadline}
	for i := range 200 {
		b := bytes.Replace(body, []byte(`"namespace": "shop"`), fmt.Appendf(nil, `"namespace": "ns-%d"`, i), 1)
		resp, err := client.Post(srv.URL+"/sync", "application/json", bytes.NewReader(b))
		require.NoError(t, err)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, string(got))
		require.Contains(t, string(got), `"children":[{`)
	}
	require.NotZero(t, dials.Load(), "the syncs asked for dials")
	require.Zero(t, returned.Load(), "every sync was answered while every dial hung")
}
