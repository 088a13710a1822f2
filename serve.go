package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/stackdome/stackdome/errorpages"
	"github.com/stackdome/stackdome/hooks"
	"github.com/stackdome/stackdome/portcheck"
)

// serve runs the three servers (hooks, error pages, metrics) and the
// verifier under one lifetime: wire builds them, app.run serves until ctx is
// cancelled, then drains and stops them.
func serve(ctx context.Context, c config, stdout io.Writer) error {
	log := newLogger(c, stdout)
	log.Info("starting", thisBuild().logAttrs()...)
	a, err := wire(c, log)
	if err != nil {
		return err
	}
	return a.run(ctx, c.drainDelay, c.shutdownTimeout)
}

// app is what serve runs: the verifier, the servers with their bound
// listeners, and the switch that turns /readyz to 503.
type app struct {
	log      *slog.Logger
	verifier interface{ Run(context.Context) } // runs until its context is done
	servers  []served                          // stopped together
	draining *atomic.Bool
}

// served is one HTTP server and the listener it serves; name is its key in
// the "serving" log line.
type served struct {
	name string
	srv  *http.Server
	ln   net.Listener
}

// listenAt is where a server listens, its name in errors and how many
// connections it keeps.
type listenAt struct {
	addr, what string
	maxConns   int
}

// wire builds the metrics registry (stackdome_build_info on it), the verifier,
// the error pages, the hook router and the servers from c, and binds their
// listeners: hooks, health and readiness on c.listen; pages only on
// c.errorPagesListen; GET /metrics only on c.metricsListen, so that whoever may
// scrape never reaches /sync (the chart opens each port to its own clients).
// Without c.serveHooks, c.listen serves health and readiness only and no
// verifier runs; without c.servePages, nothing is bound for the pages. It
// starts nothing; on an error nothing it opened stays open.
func wire(c config, log *slog.Logger) (*app, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), buildInfoGauge(thisBuild()))
	draining := new(atomic.Bool)
	ready := func() bool { return !draining.Load() }

	var verifier interface{ Run(context.Context) } = idle{}
	var hooksTLS *tls.Config // nil: plain HTTP (--insecure-plain-http, or no hooks)
	front := healthRouter(ready)
	if c.serveHooks {
		v := portcheck.New(portcheck.Config{
			Workers: c.dialWorkers, QueueSize: c.dialQueue, DialTimeout: c.dialTimeout,
			Recheck: c.portRecheck, TTL: c.verdictTTL, MaxEntries: c.verdictMax, Allow: c.dialAllow, AllowLoopback: c.dialAllowLoopback,
			Registerer: reg,
		})
		switch {
		case len(c.dialAllow) == 0:
			// Fail closed: a wrong guess at the pod network would make the
			// verifier dial what it must not; nothing is the safe default.
			log.Warn("--dial-allow is empty: no port is dialed, so every app's ports read Unknown (PortsUnverified) and a dead port is never caught; set it to the cluster's pod CIDRs (the chart's podCIDRs)")
		case c.dialAllowLoopback:
			log.Warn("--dial-allow-loopback is set: loopback addresses inside --dial-allow are dialed; this is for tests only, never for a cluster")
		}
		var err error
		if hooksTLS, err = hookListenerTLS(c.tls, log, reg); err != nil {
			return nil, err
		}
		h := &hooks.Handler{Config: c.hooks, Verifier: v, Log: log, Metrics: hooks.NewMetrics(reg),
			MaxBody: c.maxBody, Memory: c.hookMemory, Budget: hooks.Budget{PodsPerSync: c.maxPods}}
		// No metrics handler: the hook port serves no /metrics (404).
		verifier, front = v, hooks.Router(h, ready, nil)
		if hooksTLS != nil {
			front = requireClientCert(front, c.maxBody)
		}
	}

	// Stopped together (app.run), each within its own shutdown timeout.
	servers := []served{{name: "hooks", srv: newServer(front, c.http, log)}}
	addrs := []listenAt{{c.listen, "hooks", c.http.maxConns}}
	if c.servePages {
		brands, err := loadBrands(c.brandsFile)
		if err != nil {
			return nil, err
		}
		pages, err := errorpages.NewBranded(brands, errorpages.NewMetrics(reg).Observe)
		if err != nil {
			return nil, fmt.Errorf("loading error pages: %w", err)
		}
		servers = append(servers, served{name: "errorPages", srv: newServer(pages, c.pagesHTTP, log)})
		addrs = append(addrs, listenAt{c.errorPagesListen, "error pages", c.pagesHTTP.maxConns})
	}
	servers = append(servers, served{name: "metrics", srv: newServer(metricsHandler(reg), c.metricsHTTP, log)})
	addrs = append(addrs, listenAt{c.metricsListen, "metrics", c.metricsHTTP.maxConns})
	if c.pprofListen != "" {
		servers = append(servers, served{name: "pprof", srv: newServer(pprofHandler(), c.metricsHTTP, log)})
		addrs = append(addrs, listenAt{c.pprofListen, "pprof", c.metricsHTTP.maxConns})
	}
	conns := newConnMetrics(reg)
	for i, a := range addrs {
		ln, err := net.Listen("tcp", a.addr)
		if err != nil {
			for _, s := range servers[:i] {
				s.ln.Close()
			}
			return nil, fmt.Errorf("listening for %s: %w", a.what, err)
		}
		// Connections alone must not exhaust a replica (limitConns); the
		// hooks' TLS sits above the cap, which counts the TCP connections.
		ln = limitConns(servers[i].srv, ln, a.maxConns, conns(servers[i].name))
		if i == 0 && hooksTLS != nil {
			ln = tls.NewListener(ln, hooksTLS)
		}
		servers[i].ln = ln
	}
	return &app{log: log, verifier: verifier, servers: servers, draining: draining}, nil
}

// idle is the verifier of a process that serves no hooks: nothing to dial.
type idle struct{}

func (idle) Run(ctx context.Context) { <-ctx.Done() }

// healthRouter is --listen without the hooks: GET /healthz, GET /readyz
// (503 while draining), 404 for everything else, /sync included.
func healthRouter(ready func() bool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready() {
			http.Error(w, "draining", http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ready\n")
	})
	return mux
}

// loadBrands reads the brand file at path, or gives stackdome's own brand
// when path is empty. A wrong field fails start-up with its path in the file.
func loadBrands(path string) (*errorpages.Brands, error) {
	if path == "" {
		return errorpages.DefaultBrands(), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("loading the brand file: %w", err)
	}
	defer f.Close()
	bs, err := errorpages.LoadBrands(f)
	if err != nil {
		return nil, fmt.Errorf("loading the brand file %s: %w", path, err)
	}
	return bs, nil
}

// metricsHandler serves reg on GET (and HEAD) /metrics and answers 404 to
// every other path: the metrics port takes no hook and no health check.
func metricsHandler(reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	return mux
}

// pprofHandler serves Go's profiles under /debug/pprof/ (net/http/pprof's
// handlers, mounted here rather than on http.DefaultServeMux) and 404 for
// every other path: the --pprof-listen address, off unless it is set. A CPU
// profile or trace outlasts --write-timeout: net/http/pprof moves the write
// deadline by its ?seconds= itself.
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

func newServer(h http.Handler, l httpLimits, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.readHeaderTimeout,
		ReadTimeout:       l.readTimeout,
		WriteTimeout:      l.writeTimeout,
		IdleTimeout:       l.idleTimeout,
		MaxHeaderBytes:    l.maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

func newLogger(c config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: c.logLevel}
	if c.logFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
