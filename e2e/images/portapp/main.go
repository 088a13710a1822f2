// Command portapp is the e2e suite's test workload: an HTTP server whose
// ports open at start, late, never, or on request, so that readiness, port
// verification, Service endpoints and drains have something real to watch.
//
//	portapp --port 8080 --port 9090=never --port 7070=after:20s --control 8079 --on-term serve
//
// Every open port answers 200 "<pod> port <n>" (the pod from $POD_NAME, else
// the hostname), a path ending in /status/<code> with that code, and says
// the path and Host it was asked in X-Portapp-Path and X-Portapp-Host. The
// control port (always open) opens and closes ports on request (see
// controlHandler). SIGTERM (and SIGINT) does what --on-term says: serve,
// close or exit (see termMode). It writes nothing to disk, so it runs under Pod Security
// "restricted" with a read-only root filesystem, as uid 65532 in its image.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

func main() {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGINT)
	d := deps{
		listen: func(port int) (net.Listener, error) { return net.Listen("tcp", ":"+strconv.Itoa(port)) },
		after:  time.After,
		term:   term,
	}
	if err := run(context.Background(), os.Args[1:], os.Stderr, d); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "portapp:", err)
		}
		os.Exit(2)
	}
}

// deps are what run takes from the machine: how a port listens, the clock
// for after:, and the termination signal.
type deps struct {
	listen func(port int) (net.Listener, error)
	after  func(time.Duration) <-chan time.Time
	term   <-chan os.Signal
	// started, when set, is called once the control port and the ports
	// that open at start are listening.
	started func()
}

// run serves until ctx ends, POST /exit, or SIGTERM under --on-term exit;
// it returns nil then, an error for bad flags or a port it cannot open at
// start.
func run(ctx context.Context, args []string, stderr io.Writer, d deps) error {
	fs := flag.NewFlagSet("portapp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var specs []portSpec
	fs.Func("port", "a port: PORT, PORT=open, PORT=never or PORT=after:DURATION (repeatable)", func(s string) error {
		p, err := parsePort(s)
		specs = append(specs, p)
		return err
	})
	control := fs.Int("control", 0, "the control port (0: none)")
	onTermFlag := fs.String("on-term", string(termServe), "on SIGTERM: serve (until SIGKILL or POST /exit), close (listeners, then wait) or exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	onTerm, err := parseTermMode(*onTermFlag)
	if err != nil {
		return err
	}
	if len(specs) == 0 && *control == 0 {
		return errors.New("want at least one --port or a --control port")
	}
	pod := os.Getenv("POD_NAME")
	if pod == "" {
		if pod, err = os.Hostname(); err != nil {
			return fmt.Errorf("naming the pod: %w", err)
		}
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := newPorts(d.listen, func(port int) http.Handler { return appHandler(pod, port) })
	defer p.Stop()
	if *control != 0 {
		// The control port is a ports of its own: Stop on SIGTERM must
		// not close it, or POST /exit could not end a drain.
		cp := newPorts(d.listen, func(port int) http.Handler { return controlHandler(pod, port, p, cancel) })
		if err := cp.Open(*control); err != nil {
			return err
		}
		defer cp.Stop()
	}
	for _, s := range specs {
		p.add(s.Port)
		switch s.When {
		case openAtStart:
			if err := p.Open(s.Port); err != nil {
				return err
			}
		case openAfter:
			go func() {
				select {
				case <-d.after(s.After):
					if err := p.Open(s.Port); err != nil {
						log.Error("opening late", "port", s.Port, "err", err)
					}
				case <-ctx.Done():
				}
			}()
		}
	}
	log.Info("serving", "pod", pod, "uid", os.Getuid(), "ports", p.State(), "control", *control, "onTerm", onTerm)
	if d.started != nil {
		d.started()
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case sig := <-d.term:
			log.Info("terminating", "signal", sig, "onTerm", onTerm)
			switch onTerm {
			case termExit:
				return nil
			case termClose:
				p.Stop()
			}
		}
	}
}
