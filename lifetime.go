package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// run starts the verifier and the servers and serves until ctx is done or a
// server fails. Then, in this order: /readyz turns 503 and, unless a server
// already failed, the servers keep serving for drainDelay so that the
// Service stops sending new requests before the listeners close (a server
// failing meanwhile ends the drain at once); the servers stop accepting all
// at once and each finishes its in-flight requests within a shutdownTimeout
// of its own (one still running then is cut, an error), so that a hook
// request that hangs never cuts the error pages' requests or a scrape; the
// verifier stops last, as an in-flight sync may still schedule a dial. The
// metrics server serves through the drain like the others: Prometheus stops
// scraping a pod once its endpoint is not ready. run returns after
// everything it started has exited: the server failure and the shutdown
// errors joined, nil after a clean stop.
func (a *app) run(ctx context.Context, drainDelay, shutdownTimeout time.Duration) error {
	vctx, stopVerifier := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { a.verifier.Run(vctx) })
	errc := a.start(&wg)

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-errc:
	}
	serveErr = a.drain(serveErr, drainDelay, errc)
	shutdownErr := a.shutdown(shutdownTimeout)
	stopVerifier()
	wg.Wait()
	a.log.Info("stopped")
	return errors.Join(serveErr, shutdownErr)
}

// start serves each server on its listener in a goroutine of wg and returns
// the channel their failures arrive on (buffered: a failure never blocks).
func (a *app) start(wg *sync.WaitGroup) <-chan error {
	errc := make(chan error, len(a.servers))
	attrs := make([]any, 0, 2*len(a.servers))
	for _, s := range a.servers {
		wg.Go(func() {
			if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				errc <- err
			}
		})
		attrs = append(attrs, s.name, s.ln.Addr().String())
	}
	a.log.Info("serving", attrs...)
	return errc
}

// drain turns /readyz to 503, then, if serveErr is nil, waits drainDelay
// or until a server fails. It returns the failure, if any.
func (a *app) drain(serveErr error, drainDelay time.Duration, errc <-chan error) error {
	a.draining.Store(true)
	a.log.Info("draining", "delay", drainDelay.String())
	if serveErr != nil {
		return serveErr
	}
	select {
	case <-time.After(drainDelay):
		return nil
	case err := <-errc:
		return err
	}
}

// shutdown stops the servers concurrently: each stops accepting and
// finishes its in-flight requests within a shutdownTimeout of its own; a
// server that did not finish in time is closed, cutting what remains, and
// counted as an error naming it.
func (a *app) shutdown(shutdownTimeout time.Duration) error {
	errs := make([]error, len(a.servers))
	var wg sync.WaitGroup
	for i, s := range a.servers {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
			defer cancel()
			if err := s.srv.Shutdown(ctx); err != nil {
				errs[i] = fmt.Errorf("shutting down %s: %w", s.name, err)
				s.srv.Close()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
