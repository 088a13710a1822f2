package main

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// pushTag parses where push is to push: a reference naming its registry and
// its tag, so that nothing goes to Docker Hub or to :latest by default.
func pushTag(ref string, insecure bool) (name.Tag, error) {
	opts := []name.Option{name.StrictValidation}
	if insecure {
		opts = append(opts, name.Insecure)
	}
	tag, err := name.NewTag(ref, opts...)
	if err != nil {
		return name.Tag{}, fmt.Errorf("-to %q: want host[:port]/path:tag: %w", ref, err)
	}
	return tag, nil
}

// push uploads idx with every platform's manifest, config and layer, and
// tags it tag. Credentials come from the Docker config (`docker login`,
// `crane auth login`, credential helpers), as for any registry client.
//
// go-containerregistry falls back to plain HTTP for loopback and private
// (RFC 1918) registries on its own; push allows that only for loopback
// hosts, or for any host when insecure is set, since a push sends
// credentials.
func push(ctx context.Context, idx v1.ImageIndex, tag name.Tag, insecure bool) (v1.Hash, error) {
	transport := plainHTTPPolicy{next: remote.DefaultTransport, insecure: insecure}
	if err := remote.WriteIndex(tag, idx,
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(authn.DefaultKeychain),
		remote.WithTransport(transport),
	); err != nil {
		return v1.Hash{}, fmt.Errorf("pushing %s: %w", tag, err)
	}
	return idx.Digest()
}

// plainHTTPPolicy refuses a plain-HTTP request to a host that is not
// loopback, unless insecure; it never dials such a host.
type plainHTTPPolicy struct {
	next     http.RoundTripper
	insecure bool
}

func (p plainHTTPPolicy) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == "http" && !p.insecure && !isLoopback(req.URL.Hostname()) {
		return nil, fmt.Errorf("refusing plain HTTP to %s: only loopback registries are reached without TLS (-insecure, or INSECURE=1 for make, allows it)", req.URL.Host)
	}
	return p.next.RoundTrip(req)
}

// registryHost is the host name of a registry written host[:port][/path]
// (an IPv6 address in brackets), as plainHTTPPolicy sees it in a URL.
func registryHost(registry string) (string, error) {
	u, err := url.Parse("http://" + registry)
	if err != nil || strings.Contains(registry, "://") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("registry %q: want host[:port][/path]", registry)
	}
	return u.Hostname(), nil
}

// isLoopback says whether host names this machine: a loopback address,
// localhost, or a name under .localhost (RFC 6761).
func isLoopback(host string) bool {
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	addr, err := netip.ParseAddr(host)
	return err == nil && addr.IsLoopback()
}
