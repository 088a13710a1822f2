package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// app is portapp run in the test: every port listens on 127.0.0.1:0 (the
// test learns where from addr), after: waits for the test to fire it, and
// SIGTERM is a send on term.
type app struct {
	t     *testing.T
	mu    sync.Mutex
	addrs map[int]string // port → where it last listened
	fire  map[time.Duration]chan time.Time
	// listened gets each port as it starts listening (its connections
	// wait in the backlog until it serves them).
	listened chan int
	term     chan os.Signal
	done     chan error
}

func startApp(t *testing.T, args ...string) *app {
	t.Helper()
	t.Setenv("POD_NAME", "web-0")
	a := &app{t: t, addrs: map[int]string{}, fire: map[time.Duration]chan time.Time{},
		listened: make(chan int, 16), term: make(chan os.Signal), done: make(chan error, 1)}
	started := make(chan struct{})
	d := deps{
		listen: func(port int) (net.Listener, error) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err == nil {
				a.mu.Lock()
				a.addrs[port] = l.Addr().String()
				a.mu.Unlock()
				select {
				case a.listened <- port:
				default:
				}
			}
			return l, err
		},
		after: func(d time.Duration) <-chan time.Time {
			a.mu.Lock()
			defer a.mu.Unlock()
			return a.timer(d)
		},
		term:    a.term,
		started: func() { close(started) },
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { a.done <- run(ctx, args, io.Discard, d) }()
	t.Cleanup(func() {
		cancel()
		<-a.done
	})
	select {
	case <-started:
	case err := <-a.done:
		t.Fatalf("portapp exited: %v", err)
	}
	return a
}

// timer is the channel after:d waits on; a.mu held.
func (a *app) timer(d time.Duration) chan time.Time {
	if a.fire[d] == nil {
		a.fire[d] = make(chan time.Time, 1)
	}
	return a.fire[d]
}

// signal sends SIGTERM and returns once portapp has acted on it: the
// second send is received only after the first is handled.
func (a *app) signal() {
	a.term <- syscall.SIGTERM
	a.term <- syscall.SIGTERM
}

// do sends method path to port and returns the status and body, or the
// error of a refused connection.
func (a *app) do(method string, port int, path string) (int, string, error) {
	a.t.Helper()
	a.mu.Lock()
	addr, ok := a.addrs[port]
	a.mu.Unlock()
	if !ok {
		return 0, "", syscall.ECONNREFUSED // never listened
	}
	req, err := http.NewRequest(method, "http://"+addr+path, nil)
	if err != nil {
		a.t.Fatal(err)
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

func (a *app) want(port int, path string, code int, body string) {
	a.t.Helper()
	gotCode, gotBody, err := a.do("GET", port, path)
	if err != nil {
		a.t.Fatalf("GET :%d%s: %v", port, path, err)
	}
	if gotCode != code || gotBody != body {
		a.t.Errorf("GET :%d%s = %d %q, want %d %q", port, path, gotCode, gotBody, code, body)
	}
}

func (a *app) wantRefused(port int) {
	a.t.Helper()
	if _, _, err := a.do("GET", port, "/"); !errors.Is(err, syscall.ECONNREFUSED) {
		a.t.Errorf("port %d: want the connection refused, got %v", port, err)
	}
}

func (a *app) post(port int, path string, code int) {
	a.t.Helper()
	got, body, err := a.do("POST", port, path)
	if err != nil || got != code {
		a.t.Fatalf("POST :%d%s = %d %q %v, want %d", port, path, got, body, err, code)
	}
}

func (a *app) wantPorts(want string) {
	a.t.Helper()
	_, got, err := a.do("GET", 8079, "/ports")
	if err != nil {
		a.t.Fatal(err)
	}
	if diff := cmp.Diff(want, strings.TrimSpace(got)); diff != "" {
		a.t.Errorf("GET /ports (-want +got):\n%s", diff)
	}
}

// TestPortsOpen: a plain port answers at once naming the pod, a never port
// stays closed, an after: port opens when its time comes, and the control
// port reports each.
func TestPortsOpen(t *testing.T) {
	a := startApp(t, "--port", "8080", "--port", "9090=never", "--port", "7070=after:20s", "--control", "8079")
	a.want(8080, "/", 200, "web-0 port 8080\n")
	a.want(8080, "/any/path", 200, "web-0 port 8080\n")
	a.wantRefused(9090)
	a.wantRefused(7070)
	a.wantPorts(`{"7070":"closed","8080":"open","9090":"closed"}`)

	a.mu.Lock()
	fire := a.timer(20 * time.Second)
	a.mu.Unlock()
	fire <- time.Time{}
	for p := range a.listened { // the late port opens in its own goroutine
		if p == 7070 {
			break
		}
	}
	a.wantPorts(`{"7070":"open","8080":"open","9090":"closed"}`)
	a.want(7070, "/", 200, "web-0 port 7070\n")
	a.wantRefused(9090)
}

// TestStatus: /status/<code> answers that code on every port, the control
// port too.
func TestStatus(t *testing.T) {
	a := startApp(t, "--port", "8080", "--control", "8079")
	a.want(8080, "/status/503", 503, "web-0 port 8080 status 503\n")
	a.want(8080, "/status/204", 204, "")
	a.want(8079, "/status/500", 500, "web-0 port 8079 status 500\n")
	if code, _, err := a.do("GET", 8080, "/status/abc"); err != nil || code != 400 {
		t.Errorf("/status/abc = %d %v, want 400", code, err)
	}
}

// TestControl opens a never port and closes it again on request.
func TestControl(t *testing.T) {
	a := startApp(t, "--port", "9090=never", "--control", "8079")
	a.wantRefused(9090)
	a.post(8079, "/ports/9090/open", 204)
	a.post(8079, "/ports/9090/open", 204) // already open: nothing changes
	a.want(9090, "/", 200, "web-0 port 9090\n")
	a.wantPorts(`{"9090":"open"}`)
	a.post(8079, "/ports/9090/close", 204)
	a.wantRefused(9090)
	a.wantPorts(`{"9090":"closed"}`)
	a.post(8079, "/ports/0/open", 400)
	a.post(8079, "/ports/9090/listen", 404)
}

// TestOnTerm: what SIGTERM does under each --on-term.
func TestOnTerm(t *testing.T) {
	t.Run("serve", func(t *testing.T) {
		a := startApp(t, "--port", "8080", "--control", "8079", "--on-term", "serve")
		a.signal()
		a.want(8080, "/", 200, "web-0 port 8080\n")
		a.post(8079, "/exit", 204)
		if err := <-a.done; err != nil {
			t.Fatal(err)
		}
		a.done <- nil // for the cleanup
		a.wantRefused(8080)
	})
	t.Run("close", func(t *testing.T) {
		a := startApp(t, "--port", "8080", "--control", "8079", "--on-term", "close")
		a.signal()
		a.wantRefused(8080)
		a.wantPorts(`{"8080":"closed"}`)
		a.post(8079, "/ports/8080/open", 409) // terminating: ports stay closed
		select {
		case err := <-a.done:
			t.Fatalf("portapp exited on SIGTERM under --on-term close: %v", err)
		default:
		}
		a.post(8079, "/exit", 204)
		if err := <-a.done; err != nil {
			t.Fatal(err)
		}
		a.done <- nil
	})
	t.Run("exit", func(t *testing.T) {
		a := startApp(t, "--port", "8080", "--on-term", "exit")
		a.term <- syscall.SIGTERM
		if err := <-a.done; err != nil {
			t.Fatal(err)
		}
		a.done <- nil
		a.wantRefused(8080)
	})
}

// TestFlagsRefused: run refuses what it cannot serve before listening.
func TestFlagsRefused(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "want at least one --port or a --control port"},
		{[]string{"--port", "x"}, `port "x"`},
		{[]string{"--port", "8080", "--on-term", "drain"}, `--on-term "drain"`},
		{[]string{"--port", "8080", "extra"}, `unexpected argument "extra"`},
	} {
		d := deps{listen: func(int) (net.Listener, error) { t.Fatal("listened"); return nil, nil }}
		err := run(context.Background(), tc.args, io.Discard, d)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want an error containing %q, got %v", tc.args, tc.want, err)
		}
	}
}

// TestEcho: every answer names the path and Host that reached the app in
// its headers, the body as before; a status under any prefix answers that
// code, a path merely containing "status" does not.
func TestEcho(t *testing.T) {
	a := startApp(t, "--port", "8080", "--control", "8079")
	type echo struct {
		Code       int
		Body       string
		Path, Host string
	}
	for _, tc := range []struct {
		port       int
		path, host string
		want       echo
	}{
		{8080, "/", "shop.test", echo{200, "web-0 port 8080\n", "/", "shop.test"}},
		{8080, "/settings?x=1", "www.shop.test:8443", echo{200, "web-0 port 8080\n", "/settings", "www.shop.test:8443"}},
		{8080, "/status/503", "shop.test", echo{503, "web-0 port 8080 status 503\n", "/status/503", "shop.test"}},
		{8080, "/v2/status/503", "shop.test", echo{503, "web-0 port 8080 status 503\n", "/v2/status/503", "shop.test"}},
		{8080, "/admin/v2/status/502", "shop.test", echo{502, "web-0 port 8080 status 502\n", "/admin/v2/status/502", "shop.test"}},
		{8080, "/v2/status/abc", "shop.test", echo{400, "want /status/<code>, a code from 200 to 599\n", "/v2/status/abc", "shop.test"}},
		{8080, "/status/", "shop.test", echo{200, "web-0 port 8080\n", "/status/", "shop.test"}},
		{8080, "/status/503/more", "shop.test", echo{200, "web-0 port 8080\n", "/status/503/more", "shop.test"}},
		{8080, "/mystatus/503", "shop.test", echo{200, "web-0 port 8080\n", "/mystatus/503", "shop.test"}},
		{8079, "/v2/status/500", "ctl.test", echo{500, "web-0 port 8079 status 500\n", "/v2/status/500", "ctl.test"}},
	} {
		a.mu.Lock()
		addr := a.addrs[tc.port]
		a.mu.Unlock()
		req, err := http.NewRequest("GET", "http://"+addr+tc.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = tc.host
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err != nil {
			t.Fatalf("GET :%d%s: %v", tc.port, tc.path, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := echo{resp.StatusCode, string(b), resp.Header.Get("X-Portapp-Path"), resp.Header.Get("X-Portapp-Host")}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("GET :%d%s Host %s (-want +got):\n%s", tc.port, tc.path, tc.host, diff)
		}
	}
	// Only a GET (or HEAD) asks for a status: other methods get the 200.
	if code, body, err := a.do("POST", 8080, "/status/503"); err != nil || code != 200 || body != "web-0 port 8080\n" {
		t.Errorf("POST /status/503 = %d %q %v, want the plain 200", code, body, err)
	}
}
