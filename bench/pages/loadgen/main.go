// Command loadgen drives one URL over a fixed number of keep-alive
// connections for a fixed time and prints requests per second and latency
// percentiles. It speaks just enough HTTP/1.1 (a pre-built GET, a
// Content-Length body) to stay cheap, so the server, not the client, is what
// runs out of CPU. Every answer must carry the expected status and body
// length, or it counts as an error.
//
//	loadgen -url http://127.0.0.1:8082/_errors/503 -c 16 -d 5s -status 503
//	loadgen -free-port   # prints a free loopback port and exits
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		target   = flag.String("url", "", "URL to GET (http, loopback)")
		conns    = flag.Int("c", 16, "keep-alive connections")
		duration = flag.Duration("d", 5*time.Second, "measuring time")
		warmup   = flag.Duration("warmup", time.Second, "time driven before measuring")
		accept   = flag.String("accept", "text/html", "Accept header")
		status   = flag.Int("status", 503, "expected status")
		label    = flag.String("label", "", "name printed with the result")
		host     = flag.String("host", "", "Host header (default: the URL's host:port), to pick a router of a proxy")
		freePort = flag.Bool("free-port", false, "print a free loopback port and exit")
	)
	flag.Parse()
	if *freePort {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer l.Close()
		fmt.Println(l.Addr().(*net.TCPAddr).Port)
		return nil
	}
	u, err := url.Parse(*target)
	if err != nil || u.Scheme != "http" {
		return fmt.Errorf("-url must be an http URL: %q", *target)
	}
	if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-url must name a loopback address, not %q", u.Hostname())
	}
	hostHeader := u.Host
	if *host != "" {
		hostHeader = *host
	}
	req := []byte("GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + hostHeader + "\r\nAccept: " + *accept + "\r\nUser-Agent: stackdome-loadgen\r\n\r\n")

	// One answer through a fresh connection fixes the expected body length.
	probe := &client{addr: u.Host, req: req, status: *status}
	if err := probe.dial(); err != nil {
		return err
	}
	wantLen, err := probe.do(-1)
	probe.conn.Close()
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}

	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		all     []time.Duration
		errs    int
		redials int
	)
	start := time.Now()
	measureFrom := start.Add(*warmup)
	stop := measureFrom.Add(*duration)
	for range *conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &client{addr: u.Host, req: req, status: *status}
			lat := make([]time.Duration, 0, 1<<16)
			nerr, nredial := 0, 0
			for {
				t0 := time.Now()
				if t0.After(stop) {
					break
				}
				if c.conn == nil {
					if err := c.dial(); err != nil {
						nerr++
						continue
					}
					nredial++
				}
				if _, err := c.do(wantLen); err != nil {
					c.conn.Close()
					c.conn = nil
					if !errors.Is(err, errClosed) {
						nerr++
					}
					continue
				}
				if t0.After(measureFrom) {
					lat = append(lat, time.Since(t0))
				}
			}
			if c.conn != nil {
				c.conn.Close()
			}
			mu.Lock()
			all = append(all, lat...)
			errs += nerr
			redials += nredial - 1
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(all) == 0 {
		return fmt.Errorf("no answer in %s (%d errors)", *duration, errs)
	}
	slices.Sort(all)
	pct := func(p float64) time.Duration { return all[min(len(all)-1, int(float64(len(all))*p))] }
	rps := float64(len(all)) / duration.Seconds()
	fmt.Printf("%s rps=%.0f p50_us=%.0f p99_us=%.0f p999_us=%.0f requests=%d errors=%d redials=%d bytes=%d\n",
		*label, rps, us(pct(.50)), us(pct(.99)), us(pct(.999)), len(all), errs, redials, wantLen)
	if errs > 0 {
		return fmt.Errorf("%d errors", errs)
	}
	return nil
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

var errClosed = errors.New("server closed the connection")

type client struct {
	addr   string
	req    []byte
	status int
	conn   net.Conn
	r      *bufio.Reader
}

func (c *client) dial() error {
	conn, err := net.Dial("tcp", c.addr)
	if err != nil {
		return err
	}
	c.conn, c.r = conn, bufio.NewReaderSize(conn, 64<<10)
	return nil
}

// do sends one request and reads its answer, checking the status and, when
// wantLen >= 0, the body length. It returns the body length.
func (c *client) do(wantLen int) (int, error) {
	if _, err := c.conn.Write(c.req); err != nil {
		return 0, err
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		if err == io.EOF {
			return 0, errClosed
		}
		return 0, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	if code, _ := strconv.Atoi(string(line[9:12])); code != c.status {
		return 0, fmt.Errorf("status %d, want %d", code, c.status)
	}
	n, closing := -1, false
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		if len(line) <= 2 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if n, err = strconv.Atoi(string(value)); err != nil {
				return 0, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Connection")):
			closing = bytes.EqualFold(value, []byte("close"))
		}
	}
	if n < 0 {
		return 0, errors.New("no Content-Length")
	}
	if wantLen >= 0 && n != wantLen {
		return 0, fmt.Errorf("body of %d bytes, want %d", n, wantLen)
	}
	if _, err := c.r.Discard(n); err != nil {
		return 0, err
	}
	if closing {
		return n, errClosed
	}
	return n, nil
}
