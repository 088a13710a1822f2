package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// opening says when a configured port starts listening.
type opening int

const (
	openAtStart opening = iota // `8080` or `8080=open`
	openAfter                  // `8080=after:20s`: a readiness or port check that waits
	openNever                  // `8080=never`: only the control port can open it
)

// portSpec is one --port flag: a TCP port and when it opens.
type portSpec struct {
	Port  int
	When  opening
	After time.Duration // for openAfter
}

// parsePort reads PORT, PORT=open, PORT=never or PORT=after:DURATION
// (a Go duration such as 20s).
func parsePort(s string) (portSpec, error) {
	num, when, hasWhen := strings.Cut(s, "=")
	port, err := parseNumber(num)
	if err != nil {
		return portSpec{}, fmt.Errorf("--port %q: %w", s, err)
	}
	spec := portSpec{Port: port}
	switch {
	case !hasWhen || when == "open":
		spec.When = openAtStart
	case when == "never":
		spec.When = openNever
	case strings.HasPrefix(when, "after:"):
		d, err := time.ParseDuration(strings.TrimPrefix(when, "after:"))
		if err != nil || d <= 0 {
			return portSpec{}, fmt.Errorf("--port %q: want after:<positive duration>, such as after:20s", s)
		}
		spec.When, spec.After = openAfter, d
	default:
		return portSpec{}, fmt.Errorf("--port %q: want PORT, PORT=open, PORT=never or PORT=after:DURATION", s)
	}
	return spec, nil
}

// parseNumber reads a TCP port, 1–65535.
func parseNumber(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %q: want a number from 1 to 65535", s)
	}
	return n, nil
}

// termMode is what SIGTERM does (--on-term).
type termMode string

const (
	// termServe keeps every open port serving until the kubelet's SIGKILL
	// at the end of the grace period, or POST /exit on the control port: a
	// pod that drains by answering.
	termServe termMode = "serve"
	// termClose closes every listener at once (new connections are
	// refused) and keeps running until SIGKILL or POST /exit: a pod whose
	// ports are gone while it is still Terminating.
	termClose termMode = "close"
	// termExit closes every listener and exits 0 at once, as most servers
	// do.
	termExit termMode = "exit"
)

func parseTermMode(s string) (termMode, error) {
	switch m := termMode(s); m {
	case termServe, termClose, termExit:
		return m, nil
	}
	return "", fmt.Errorf("--on-term %q: want serve, close or exit", s)
}
