//go:build e2e

package framework

// Answers fetched from the real node's network: what a client there (a
// pod, Traefik's peer) gets, for the tests that ask Traefik or a pod.

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Fetch is the answer to GET url from the node, sent with Host host,
// Accept accept and X-Request-Id requestID (each left out when empty),
// within 10 s.
func (s *Suite) Fetch(ctx context.Context, url, host, accept, requestID string) (Answer, error) {
	return s.FetchWithin(ctx, 10*time.Second, url, host, accept, requestID)
}

// FetchWithin is Fetch within timeout.
func (s *Suite) FetchWithin(ctx context.Context, timeout time.Duration, url, host, accept, requestID string) (Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return Answer{}, err
	}
	if host != "" {
		req.Host = host
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if requestID != "" {
		req.Header.Set("X-Request-Id", requestID)
	}
	c := s.Node.HTTPClient()
	c.Timeout = timeout
	resp, err := c.Do(req)
	if err != nil {
		return Answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return Answer{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Body: string(b)}, err
}

// GetCodeAs is the status and body of GET url from the node with Host host
// and Accept accept (none if ""), within 10 s.
func (s *Suite) GetCodeAs(ctx context.Context, url, host, accept string) (int, string, error) {
	a, err := s.Fetch(ctx, url, host, accept, "")
	return a.Status, a.Body, err
}

// GetFromNode is the body of a 200 answer to GET url from the node with
// Host host; any other status is an error naming it.
func (s *Suite) GetFromNode(ctx context.Context, url, host string) (string, error) {
	code, body, err := s.GetCodeAs(ctx, url, host, "")
	if err == nil && code != http.StatusOK {
		err = fmt.Errorf("GET %s: %d %q", url, code, body)
	}
	return body, err
}

// ThroughTraefikAs asks Traefik's web entry point (its pod's :8000, once
// RequireTraefik installed it) for path on host, with an Accept header and
// an X-Request-Id (none when empty), from the node, within 10 s.
func (s *Suite) ThroughTraefikAs(ctx context.Context, host, path, accept, requestID string) (Answer, error) {
	return s.Fetch(ctx, "http://"+net.JoinHostPort(s.TraefikIP(), "8000")+path, host, accept, requestID)
}

// DialFromNode connects to ip:port from the node's network within 5 s,
// and closes the connection.
func (s *Suite) DialFromNode(ctx context.Context, ip string, port int) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := s.Node.DialContext(ctx, "tcp", net.JoinHostPort(ip, fmt.Sprint(port)))
	if err != nil {
		return err
	}
	return c.Close()
}

// ThroughTraefik sends GET path with Host host to Traefik's web entry
// point, from the node.
func (s *Suite) ThroughTraefik(ctx context.Context, host, path string) (int, string, error) {
	a, err := s.ThroughTraefikAs(ctx, host, path, "", "")
	return a.Status, a.Body, err
}
