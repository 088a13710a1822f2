//go:build e2e

package framework

// Asking the chart's Traefik pod on each of its entry points, from the
// real node, and checking its replies.

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// The chart's Traefik at its defaults listens in its pod on web :8000
// (plain HTTP), websecure :8443 (TLS, its default certificate: Traefik
// generates a self-signed one when no TLSStore names another) and traefik
// :8080 (/ping, and whatever routes are put on it; not in its Service).
// Chart 41.3.0 values.yaml, ports.
var TraefikPorts = map[string]string{"web": "8000", "websecure": "8443", "traefik": "8080"}

// TraefikReply is Traefik's answer to one request: its status, headers and body,
// and whether it came over TLS.
type TraefikReply struct {
	Status int
	Header http.Header
	Body   string
	TLS    bool
}

// Answer is the reply as the page checks (pages.go) take it.
func (r TraefikReply) Answer() Answer {
	return Answer{Status: r.Status, ContentType: r.Header.Get("Content-Type"), Body: r.Body}
}

// AskTraefik sends GET path (with its query) for host to the entry point
// ep of the chart's Traefik pod, from the node, with accept as Accept
// (none when empty), within 10 s; it follows no redirect. On websecure it
// speaks TLS with host as SNI, as a browser asking https://<host>/ would;
// the default certificate is self-signed, so it is not verified.
func (s *Suite) AskTraefik(ctx context.Context, ep, host, path, accept string) (TraefikReply, error) {
	port, ok := TraefikPorts[ep]
	if !ok {
		return TraefikReply{}, fmt.Errorf("no entry point %q", ep)
	}
	scheme := "http"
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true,
		// Every request goes to the Traefik pod whatever its URL's host.
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return s.Node.DialContext(ctx, network, net.JoinHostPort(s.TraefikIP(), port))
		}}
	if ep == "websecure" {
		scheme = "https"
		tr.TLSClientConfig = &tls.Config{ServerName: host, InsecureSkipVerify: true} // Traefik's default certificate is self-signed
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+host+path, nil)
	if err != nil {
		return TraefikReply{}, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := c.Do(req)
	if err != nil {
		return TraefikReply{}, fmt.Errorf("%s %s://%s%s: %w", ep, scheme, host, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return TraefikReply{Status: resp.StatusCode, Header: resp.Header, Body: string(b), TLS: resp.TLS != nil}, err
}

// ServedBy checks that r is portapp's 200 from port, asked for path on
// host (what its X-Portapp-* headers say reached it).
func ServedBy(r TraefikReply, port int, host, path string) error {
	if r.Status != http.StatusOK || !strings.HasSuffix(r.Body, fmt.Sprintf(" port %d\n", port)) ||
		r.Header.Get("X-Portapp-Host") != host || r.Header.Get("X-Portapp-Path") != path {
		return fmt.Errorf("%d %.100q, the app asked for %q on %q; want port %d's 200 asked for %q on %q",
			r.Status, r.Body, r.Header.Get("X-Portapp-Path"), r.Header.Get("X-Portapp-Host"), port, path, host)
	}
	return nil
}

// RedirectsTo checks that r is a permanent redirect to location.
func RedirectsTo(r TraefikReply, location string) error {
	if (r.Status != http.StatusMovedPermanently && r.Status != http.StatusPermanentRedirect) || r.Header.Get("Location") != location {
		return fmt.Errorf("%d, Location %q; want a permanent redirect to %s", r.Status, r.Header.Get("Location"), location)
	}
	return nil
}

// WaitServed waits until the app's port answers path on host through
// Traefik's entry point ep: stackdome reads Serving from its own dial,
// and Traefik sends a request to the pod only once the kubelet has called
// it Ready and the Service's EndpointSlice says so (until then the chart's
// Traefik, allowEmptyServices=true, answers 503 itself).
func (f *NodeFixture) WaitServed(ep, host, path string, port int, reached string) {
	t := f.t
	t.Helper()
	f.WaitFor(time.Minute, fmt.Sprintf("%s %s%s served by port %d", ep, host, path, port), func() (bool, error) {
		r, err := f.AskTraefik(t.Context(), ep, host, path, "")
		if err == nil {
			err = ServedBy(r, port, host, reached)
		}
		return err == nil, err
	})
}
