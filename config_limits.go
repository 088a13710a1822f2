package main

import (
	"flag"
	"fmt"
	"time"
)

// The bounds of what connections alone can hold of each port: how many
// connections each listener keeps (limitConns), and the error pages' own
// header size and timeouts, sized to Traefik. The hooks port's header size
// and timeouts are --max-header-bytes, --read-header-timeout and
// --idle-timeout (config.go); the metrics and pprof ports take them too.

// Defaults of the connection caps, one per listener. Each connection
// costs ~20 KiB idle (goroutine stack and net/http's 4 KiB read and write
// buffers) and at most its header limit plus 4 KiB more while it sends
// one; a cap times that worst case must fit the chart's 256 MiB beside
// what the port's requests themselves hold (docs/performance.md).
const (
	// Traefik keeps up to 200 idle connections per backend a replica
	// (maxIdleConnsPerHost), plus one per request in flight; past the cap
	// it loses idle ones only. 512 connections sending 15 KB headers took
	// the page server to 60 MiB RSS under GOMEMLIMIT=64Mi, 1,024 to 70
	// MiB (TestConnectionFloodsLeaveRSSUnderTheChartLimit): the chart gives
	// the page pods 128Mi.
	defaultPagesMaxConns = 512
	// Metacontroller opens one per hook call in flight (--workers, 5 by
	// default) and keeps two idle per host; the kubelet probes /healthz
	// and /readyz.
	defaultHooksMaxConns = 128
	// A scrape is one connection per Prometheus replica.
	defaultMetricsMaxConns = 16
	// What Traefik's errors middleware forwards is the visitor's own
	// request's headers, every one unless errorRequestHeaders says
	// otherwise (traefik/traefik v3.7 pkg/middlewares/customerrors): a
	// browser sends 1-2 KiB plus its cookies for the site. 16 KiB is twice
	// the 8 KiB a header line may have behind nginx's defaults.
	defaultPagesMaxHeaderBytes = 16 << 10
)

// defineLimitFlags: the connection caps of the three ports and the page
// port's header size and timeouts.
func defineLimitFlags(fs *flag.FlagSet, c *config) {
	fs.IntVar(&c.http.maxConns, "max-conns", defaultHooksMaxConns, "connections --listen keeps at once; past it, one waiting for its first request or idle since its last is closed for the new one (the longest waiting first), and while every one serves a request the new one waits in the kernel's backlog")
	fs.IntVar(&c.pagesHTTP.maxConns, "error-pages-max-conns", defaultPagesMaxConns, "connections --error-pages-listen keeps at once, as --max-conns")
	fs.IntVar(&c.metricsHTTP.maxConns, "metrics-max-conns", defaultMetricsMaxConns, "connections --metrics-listen (and --pprof-listen) keeps at once, as --max-conns")
	fs.IntVar(&c.pagesHTTP.maxHeaderBytes, "error-pages-max-header-bytes", defaultPagesMaxHeaderBytes, "largest request header block of the error pages in bytes: Traefik forwards the visitor's headers, cookies included")
	// Traefik writes a request's headers at once: a header block still
	// arriving after 2 s is not Traefik's. Traefik keeps its connections
	// to a backend for 90 s idle by default; when this closes one first,
	// its Transport sees the close and resends a GET (every page request)
	// on a new connection.
	fs.DurationVar(&c.pagesHTTP.readHeaderTimeout, "error-pages-read-header-timeout", 2*time.Second, "time to read a request's headers on the error pages")
	fs.DurationVar(&c.pagesHTTP.idleTimeout, "error-pages-idle-timeout", 10*time.Second, "how long an idle keep-alive connection of the error pages is kept")
}

// validateLimits checks the flags of defineLimitFlags and completes the
// page and metrics ports' limits from the hooks port's.
func validateLimits(c *config) error {
	for _, f := range []struct {
		flag  string
		value int
	}{
		{"max-conns", c.http.maxConns},
		{"error-pages-max-conns", c.pagesHTTP.maxConns},
		{"metrics-max-conns", c.metricsHTTP.maxConns},
		{"max-header-bytes", c.http.maxHeaderBytes},
		{"error-pages-max-header-bytes", c.pagesHTTP.maxHeaderBytes},
	} {
		if f.value < 1 {
			return fmt.Errorf("--%s %d: must be at least 1", f.flag, f.value)
		}
	}
	for _, d := range []struct {
		flag  string
		value time.Duration
	}{
		{"error-pages-read-header-timeout", c.pagesHTTP.readHeaderTimeout},
		{"error-pages-idle-timeout", c.pagesHTTP.idleTimeout},
	} {
		if d.value <= 0 {
			return fmt.Errorf("--%s %s: must be positive", d.flag, d.value)
		}
	}
	c.pagesHTTP.readTimeout, c.pagesHTTP.writeTimeout = c.http.readTimeout, c.http.writeTimeout
	metricsConns := c.metricsHTTP.maxConns
	c.metricsHTTP = c.http
	c.metricsHTTP.maxConns = metricsConns
	return nil
}
