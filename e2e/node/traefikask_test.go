//go:build e2e

package node

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// The chart's Traefik at its defaults listens in its pod on web :8000
// (plain HTTP), websecure :8443 (TLS, its default certificate: Traefik
// generates a self-signed one when no TLSStore names another) and traefik
// :8080 (/ping, and whatever routes are put on it; not in its Service).
// Chart 41.3.0 values.yaml, ports.
var traefikPorts = map[string]string{"web": "8000", "websecure": "8443", "traefik": "8080"}

// reply is Traefik's answer to one request: its status, headers and body,
// and whether it came over TLS.
type reply struct {
	Status int
	Header http.Header
	Body   string
	TLS    bool
}

// answer is the reply as framework's page checks take it.
func (r reply) answer() framework.Answer {
	return framework.Answer{Status: r.Status, ContentType: r.Header.Get("Content-Type"), Body: r.Body}
}

// askTraefik sends GET path (with its query) for host to the entry point
// ep of the chart's Traefik pod, from the node, with accept as Accept
// (none when empty), within 10 s; it follows no redirect. On websecure it
// speaks TLS with host as SNI, as a browser asking https://<host>/ would;
// the default certificate is self-signed, so it is not verified.
func askTraefik(ctx context.Context, ep, host, path, accept string) (reply, error) {
	port, ok := traefikPorts[ep]
	if !ok {
		return reply{}, fmt.Errorf("no entry point %q", ep)
	}
	scheme := "http"
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true,
		// Every request goes to the Traefik pod whatever its URL's host.
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return realNode().DialContext(ctx, network, net.JoinHostPort(traefikIP(), port))
		}}
	if ep == "websecure" {
		scheme = "https"
		tr.TLSClientConfig = &tls.Config{ServerName: host, InsecureSkipVerify: true} // Traefik's default certificate is self-signed
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+host+path, nil)
	if err != nil {
		return reply{}, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := c.Do(req)
	if err != nil {
		return reply{}, fmt.Errorf("%s %s://%s%s: %w", ep, scheme, host, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{Status: resp.StatusCode, Header: resp.Header, Body: string(b), TLS: resp.TLS != nil}, err
}

// servedBy checks that r is portapp's 200 from port, asked for path on
// host (what its X-Portapp-* headers say reached it).
func servedBy(r reply, port int, host, path string) error {
	if r.Status != http.StatusOK || !strings.HasSuffix(r.Body, fmt.Sprintf(" port %d\n", port)) ||
		r.Header.Get("X-Portapp-Host") != host || r.Header.Get("X-Portapp-Path") != path {
		return fmt.Errorf("%d %.100q, the app asked for %q on %q; want port %d's 200 asked for %q on %q",
			r.Status, r.Body, r.Header.Get("X-Portapp-Path"), r.Header.Get("X-Portapp-Host"), port, path, host)
	}
	return nil
}

// redirectsTo checks that r is a permanent redirect to location.
func redirectsTo(r reply, location string) error {
	if (r.Status != http.StatusMovedPermanently && r.Status != http.StatusPermanentRedirect) || r.Header.Get("Location") != location {
		return fmt.Errorf("%d, Location %q; want a permanent redirect to %s", r.Status, r.Header.Get("Location"), location)
	}
	return nil
}

// waitServed waits until the app's port answers path on host through
// Traefik's entry point ep: stackdome reads Serving from its own dial,
// and Traefik sends a request to the pod only once the kubelet has called
// it Ready and the Service's EndpointSlice says so (until then the chart's
// Traefik, allowEmptyServices=true, answers 503 itself).
func waitServed(t *testing.T, ep, host, path string, port int, reached string) {
	t.Helper()
	waitFor(t, time.Minute, fmt.Sprintf("%s %s%s served by port %d", ep, host, path, port), func() (bool, error) {
		r, err := askTraefik(t.Context(), ep, host, path, "")
		if err == nil {
			err = servedBy(r, port, host, reached)
		}
		return err == nil, err
	})
}
