//go:build e2e

package framework

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// The cluster-network stand-in for https:// hooks (the chart's hooks.tls).
// Metacontroller's client sends a CONNECT for <service>.<namespace>:<port>
// (HTTPS_PROXY). A kube-proxy would pass the bytes through; the stand-in
// must read the exchange to record it, so it ends the TLS on both sides, and
// checks on each side what the other end would: toward Metacontroller it
// presents the release's serving certificate (the Secret the chart mounts
// into stackdome, so Metacontroller's caBundle must trust it and it must be
// valid for the name dialed) and requires a client certificate of the
// release's CA (Metacontroller's clientTLS); toward the endpoint it
// verifies stackdome's certificate for the name dialed against the CA and
// presents the release's client certificate, which stackdome must accept.
// A failure on either side fails the call, as it would in a cluster. The
// Secrets are read at every CONNECT, so a rotation is seen at once.

// hookCredentials are a release's TLS material, read from its Secrets.
type hookCredentials struct {
	server, client tls.Certificate
	ca             *x509.CertPool
}

// credentials reads the chart's Secrets of the Service name in ns:
// <name>-hooks-tls (serving pair, ca.crt) and <name>-metacontroller-client.
func (n *clusterNet) credentials(ctx context.Context, name, ns string) (*hookCredentials, error) {
	pair := func(secret string) (tls.Certificate, []byte, error) {
		s, err := n.kube.Get(ctx, "/api/v1/namespaces/"+ns+"/secrets/"+secret)
		if err != nil {
			return tls.Certificate{}, nil, fmt.Errorf("reading the Secret %s/%s: %w", ns, secret, err)
		}
		var b [3][]byte
		for i, k := range []string{"tls.crt", "tls.key", "ca.crt"} {
			if b[i], err = base64.StdEncoding.DecodeString(fmt.Sprint(Dig(s, "data", k))); err != nil {
				return tls.Certificate{}, nil, fmt.Errorf("decoding the Secret %s/%s key %s: %w", ns, secret, k, err)
			}
		}
		c, err := tls.X509KeyPair(b[0], b[1])
		return c, b[2], err
	}
	var c hookCredentials
	var caPEM []byte
	var err error
	if c.server, caPEM, err = pair(name + "-hooks-tls"); err != nil {
		return nil, err
	}
	if c.client, _, err = pair(name + "-metacontroller-client"); err != nil {
		return nil, err
	}
	c.ca = x509.NewCertPool()
	if !c.ca.AppendCertsFromPEM(caPEM) {
		return nil, errors.New("no CA certificate in ca.crt")
	}
	return &c, nil
}

// serveConnect relays one CONNECT tunnel of https:// hook calls.
func (n *clusterNet) serveConnect(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	name, ns, ok := serviceName(host)
	if !ok {
		http.Error(w, host+": no such host", http.StatusBadGateway)
		return
	}
	creds, err := n.credentials(r.Context(), name, ns)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "no hijack", http.StatusInternalServerError)
		return
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	tc := tls.Server(conn, &tls.Config{
		Certificates: []tls.Certificate{creds.server}, ClientCAs: creds.ca,
		ClientAuth: tls.RequireAndVerifyClientCert, NextProtos: []string{"http/1.1"}, MinVersion: tls.VersionTLS12,
	})
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := tc.Handshake(); err != nil {
		n.record(HookExchange{At: time.Now(), url: "https://" + r.Host, Err: "TLS handshake with the caller: " + err.Error(), Status: http.StatusBadGateway})
		return
	}
	tc.SetDeadline(time.Time{})
	cn := tc.ConnectionState().PeerCertificates[0].Subject.CommonName
	up := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second,
		TLSClientConfig: &tls.Config{RootCAs: creds.ca, ServerName: host, Certificates: []tls.Certificate{creds.client}, MinVersion: tls.VersionTLS12}}
	defer up.CloseIdleConnections()
	br := bufio.NewReader(tc)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		req.URL.Scheme, req.URL.Host = "https", r.Host
		rec := &recorder{header: http.Header{}, code: http.StatusOK}
		n.relay(rec, req, "https", up, HookExchange{ClientCN: cn})
		resp := &http.Response{StatusCode: rec.code, ProtoMajor: 1, ProtoMinor: 1, Header: rec.header,
			Body: io.NopCloser(bytes.NewReader(rec.body.Bytes())), ContentLength: int64(rec.body.Len()), Request: req}
		for _, h := range []string{"Content-Length", "Transfer-Encoding", "Connection"} {
			resp.Header.Del(h)
		}
		if err := resp.Write(tc); err != nil {
			return
		}
	}
}

// recorder is the http.ResponseWriter relay writes one tunneled answer to.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(code int)        { r.code = code }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
