// Command smokeapp is the real-node smoke test's client: "get" fetches URLs
// every second, each time on a new connection, and prints one line per
// attempt, which the test reads through the pod's log.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: smokeapp get URL...")
		os.Exit(2)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	switch os.Args[1] {
	case "get":
		get(os.Args[2:], sig)
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", os.Args[1])
		os.Exit(2)
	}
}

func get(urls []string, sig chan os.Signal) {
	// A new connection each time: a NetworkPolicy cuts new connections off,
	// never an established one. HTTPS is verified against the cluster's CA,
	// which the pod's service-account volume holds, as any in-cluster client
	// verifies the API server.
	tr := &http.Transport{DisableKeepAlives: true}
	if ca, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"); err == nil {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	c := &http.Client{Timeout: 2 * time.Second, Transport: tr}
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
			// One line per attempt, whatever the body (the API server's
			// /version is indented JSON).
			fmt.Printf("%d OK %s %d %s\n", n, u, resp.StatusCode, strings.Join(strings.Fields(string(body)), " "))
		}
		select {
		case <-sig:
			return
		case <-t.C:
		}
	}
}
