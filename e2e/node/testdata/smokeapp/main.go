// Command smokeapp is the real-node smoke test's image: one static binary
// that is the pod sandbox ("pause": sleeps until signalled), a web server
// ("serve": answers its pod name, ready after a delay) or a client ("get":
// fetches URLs every second and prints one line per attempt, which the test
// reads through the pod's log).
package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: smokeapp pause | serve ADDR READY_AFTER | get URL...")
		os.Exit(2)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	switch os.Args[1] {
	case "pause":
		<-sig
	case "serve":
		serve(os.Args[2], os.Args[3], sig)
	case "get":
		get(os.Args[2:], sig)
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", os.Args[1])
		os.Exit(2)
	}
}

func serve(addr, readyAfter string, sig chan os.Signal) {
	d, err := time.ParseDuration(readyAfter)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var ready atomic.Bool
	time.AfterFunc(d, func() { ready.Store(true) })
	mux := http.NewServeMux()
	mux.HandleFunc("/ready", func(w http.ResponseWriter, r *http.Request) {
		if !ready.Load() {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s\n", os.Getenv("POD_NAME"))
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-sig
		srv.Shutdown(context.Background())
	}()
	fmt.Println("serving on", addr)
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func get(urls []string, sig chan os.Signal) {
	c := &http.Client{Timeout: 2 * time.Second}
	t := time.NewTicker(time.Second)
	for n := 0; ; n++ {
		for _, u := range urls {
			resp, err := c.Get(u)
			if err != nil {
				fmt.Printf("%d ERR %s %v\n", n, u, err)
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			fmt.Printf("%d OK %s %d %s\n", n, u, resp.StatusCode, strings.TrimSpace(string(body)))
		}
		select {
		case <-sig:
			return
		case <-t.C:
		}
	}
}
