package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/stackdome/stackdome/errorpages"
	"github.com/stackdome/stackdome/hooks"
	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/portcheck"
)

// serve runs both servers and the verifier under one lifetime. On
// cancellation /readyz turns 503, after the drain delay both servers stop
// accepting and finish in-flight requests within the shutdown timeout, then
// the verifier stops.
func serve(ctx context.Context, c config, stdout io.Writer) error {
	log := newLogger(c, stdout)
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	verifier := portcheck.New(portcheck.Config{
		Workers: c.dialWorkers, QueueSize: c.dialQueue, DialTimeout: c.dialTimeout,
		Recheck: c.portRecheck, TTL: c.verdictTTL, Allow: c.dialAllow, Registerer: reg,
	})
	pagesServed := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stackdome_error_pages_served_total",
		Help: "Error pages answered, by status code and format (html or json).",
	}, []string{"code", "format"})
	reg.MustRegister(pagesServed)
	pages, err := errorpages.New(func(code int, format string) {
		pagesServed.WithLabelValues(fmt.Sprint(code), format).Inc()
	})
	if err != nil {
		return fmt.Errorf("loading error pages: %w", err)
	}

	var draining atomic.Bool
	h := &hooks.Handler{Config: c.hooks, Verifier: verifier, Log: log, Metrics: hooks.NewMetrics(reg), MaxBody: c.maxBody}
	router := hooks.Router(h, func() bool { return !draining.Load() }, promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))

	hookLn, err := net.Listen("tcp", c.listen)
	if err != nil {
		return fmt.Errorf("listening for hooks: %w", err)
	}
	pageLn, err := net.Listen("tcp", c.errorPagesListen)
	if err != nil {
		hookLn.Close()
		return fmt.Errorf("listening for error pages: %w", err)
	}
	servers := []*http.Server{newServer(router, c.http, log), newServer(pages, c.http, log)}
	listeners := []net.Listener{hookLn, pageLn}

	vctx, stopVerifier := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { verifier.Run(vctx) })
	errc := make(chan error, len(servers))
	for i, s := range servers {
		wg.Go(func() {
			if err := s.Serve(listeners[i]); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		})
	}
	log.Info("serving", "hooks", hookLn.Addr().String(), "errorPages", pageLn.Addr().String())

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	// Drain: /readyz answers 503 so that the Service stops sending new
	// requests before the listeners close.
	draining.Store(true)
	log.Info("draining", "delay", c.drainDelay.String())
	if serveErr == nil {
		select {
		case <-time.After(c.drainDelay):
		case serveErr = <-errc:
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), c.shutdownTimeout)
	defer cancel()
	var shutdownErr error
	for _, s := range servers {
		if err := s.Shutdown(sctx); err != nil {
			shutdownErr = errors.Join(shutdownErr, fmt.Errorf("shutting down: %w", err))
			s.Close()
		}
	}
	stopVerifier()
	wg.Wait()
	log.Info("stopped")
	return errors.Join(serveErr, shutdownErr)
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

// syncOnce answers one sync request offline, through the same Sync the
// server calls, with a verifier that knows nothing yet — what a freshly
// started server answers.
func syncOnce(c config, stdin io.Reader, stdout io.Writer) error {
	in := stdin
	if c.syncFile != "-" {
		f, err := os.Open(c.syncFile)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	body, err := io.ReadAll(io.LimitReader(in, c.maxBody+1))
	if err != nil {
		return fmt.Errorf("reading request: %w", err)
	}
	if int64(len(body)) > c.maxBody {
		return fmt.Errorf("request exceeds %d bytes", c.maxBody)
	}
	var req metacontroller.SyncRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("decoding request: %w", err)
	}
	now := c.syncNow
	if now.IsZero() {
		now = time.Now()
	}
	resp, _, err := c.hooks.Sync(&req, nil, now)
	if err != nil {
		return err
	}
	out, err := json.MarshalIndent(resp, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s\n", out)
	return err
}
