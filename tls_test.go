package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
)

// testCA mints certificates for the tests, as the chart's genCA and
// cert-manager's CA Issuer would.
type testCA struct {
	cert   *x509.Certificate
	key    *ecdsa.PrivateKey
	pem    []byte
	serial atomic.Int64
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	ca := &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
	ca.serial.Store(1)
	return ca
}

// issue mints a leaf for cn, valid for dnsNames, with one extended usage;
// it returns the certificate and key PEM and the serial number.
func (ca *testCA) issue(t *testing.T, cn string, usage x509.ExtKeyUsage, dnsNames ...string) (certPEM, keyPEM []byte, serial int64) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	serial = ca.serial.Add(1)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn}, DNSNames: dnsNames,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(12 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), serial
}

// secretVolume is a directory laid out as the kubelet lays out a Secret
// volume: each key a symlink through ..data to a timestamped directory, a
// new content swapped in by renaming ..data (atomically).
type secretVolume struct {
	dir string
	gen int
}

func newSecretVolume(t *testing.T, files map[string][]byte) *secretVolume {
	v := &secretVolume{dir: t.TempDir()}
	v.write(t, files)
	for k := range files {
		require.NoError(t, os.Symlink(filepath.Join("..data", k), filepath.Join(v.dir, k)))
	}
	return v
}

func (v *secretVolume) path(key string) string { return filepath.Join(v.dir, key) }

// write swaps in a new content of every key.
func (v *secretVolume) write(t *testing.T, files map[string][]byte) {
	t.Helper()
	v.gen++
	ts := fmt.Sprintf("..2026_12_05_00_00_%02d", v.gen)
	require.NoError(t, os.Mkdir(filepath.Join(v.dir, ts), 0o755))
	for k, b := range files {
		require.NoError(t, os.WriteFile(filepath.Join(v.dir, ts, k), b, 0o644))
	}
	tmp := filepath.Join(v.dir, "..data_tmp")
	require.NoError(t, os.Symlink(ts, tmp))
	require.NoError(t, os.Rename(tmp, filepath.Join(v.dir, "..data")))
}

// serviceName is the name Metacontroller dials (the chart's Service in its
// namespace), and so the name the serving certificate must hold.
const serviceName = "stackdome.stackdome"

// tlsClient is a client trusting ca for the hooks' name, presenting cert
// (nil: no certificate); each request opens its own connection, so each
// sees the server's current pair.
func tlsClient(t *testing.T, ca *testCA, certPEM, keyPEM []byte) *http.Client {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	cfg := &tls.Config{RootCAs: roots, ServerName: serviceName, MinVersion: tls.VersionTLS12}
	if certPEM != nil {
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		require.NoError(t, err)
		cfg.Certificates = []tls.Certificate{pair}
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg, DisableKeepAlives: true}}
}

// hookTLSFiles are a serving pair for serviceName and the client CA, as
// the chart mounts them.
func hookTLSFiles(t *testing.T, ca *testCA) map[string][]byte {
	crt, key, _ := ca.issue(t, serviceName, x509.ExtKeyUsageServerAuth, serviceName, serviceName+".svc", serviceName+".svc.cluster.local")
	return map[string][]byte{"tls.crt": crt, "tls.key": key, "ca.crt": ca.pem}
}

func tlsArgsOf(v *secretVolume, extra ...string) []string {
	return append([]string{"--tls-cert-file", v.path("tls.crt"), "--tls-key-file", v.path("tls.key"), "--tls-client-ca-file", v.path("ca.crt")}, extra...)
}

// TestHooksAnswerOnlyTheClientCA: over the hooks port's TLS, a sync from a
// client certificate of the client CA is answered as the golden fixture
// says; the same request without a certificate is refused 403 while
// /healthz and /readyz answer it (the kubelet's probes); a certificate of
// another CA is refused (Go's client does not even offer it), the server's
// own certificate (server usage only) fails the handshake; and plain HTTP is not spoken.
func TestHooksAnswerOnlyTheClientCA(t *testing.T) {
	ca := newTestCA(t, "stackdome hooks CA")
	vol := newSecretVolume(t, hookTLSFiles(t, ca))
	srv := runServe(t, tlsArgsOf(vol)...)
	base := "https://" + srv.addrs["hooks"]
	body, err := os.ReadFile("testdata/sync/serving.request.json")
	require.NoError(t, err)
	want, err := os.ReadFile("testdata/sync/serving.response.json")
	require.NoError(t, err)

	mcCrt, mcKey, _ := ca.issue(t, "metacontroller", x509.ExtKeyUsageClientAuth)
	post := func(c *http.Client) (int, []byte, error) {
		req, err := http.NewRequest(http.MethodPost, base+"/sync", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		// The address is loopback; the certificate is checked for the name.
		resp, err := c.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}

	code, got, err := post(tlsClient(t, ca, mcCrt, mcKey))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code, string(got))
	require.JSONEq(t, string(want), string(got))

	anonymous := tlsClient(t, ca, nil, nil)
	code, got, err = post(anonymous)
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, code, string(got))
	for _, path := range []string{"/customize"} {
		resp, err := anonymous.Post(base+path, "application/json", strings.NewReader(`{}`))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusForbidden, resp.StatusCode, path)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := anonymous.Get(base + path)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
	}

	other := newTestCA(t, "another CA")
	oCrt, oKey, _ := other.issue(t, "metacontroller", x509.ExtKeyUsageClientAuth)
	// Go's client offers no certificate the server's CA list does not
	// name: the request arrives without one.
	code, _, err = post(tlsClient(t, ca, oCrt, oKey))
	require.True(t, err != nil || code == http.StatusForbidden, "a client certificate of another CA: %d %v", code, err)

	files := hookTLSFiles(t, ca)
	_, _, err = post(tlsClient(t, ca, files["tls.crt"], files["tls.key"]))
	require.Error(t, err, "a certificate of the CA without client usage")

	// Go's TLS server answers plain HTTP 400 and closes the connection
	// without reading the request: a client still writing its body may
	// see the close as a reset instead. Either way no handler answered.
	resp, err := http.Post("http://"+srv.addrs["hooks"]+"/sync", "application/json", bytes.NewReader(body))
	if err == nil {
		resp.Body.Close()
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, "plain HTTP to the TLS port")
	} else {
		require.ErrorContains(t, err, "connection reset by peer", "plain HTTP to the TLS port")
	}
}

// TestRotatedCertificateIsServed: the Secret volume swapped to a new
// serving certificate (a new leaf of the same CA, as cert-manager renews
// it), the next handshakes present it, no restart; a new client CA is
// trusted from then on, and the old one no longer.
func TestRotatedCertificateIsServed(t *testing.T) {
	ca := newTestCA(t, "stackdome hooks CA")
	vol := newSecretVolume(t, hookTLSFiles(t, ca))
	srv := runServe(t, tlsArgsOf(vol, "--tls-reload-interval", "1ns")...)
	base := "https://" + srv.addrs["hooks"]
	mcCrt, mcKey, _ := ca.issue(t, "metacontroller", x509.ExtKeyUsageClientAuth)
	serial := func(c *http.Client) int64 {
		t.Helper()
		resp, err := c.Post(base+"/customize", "application/json", strings.NewReader(`{}`))
		require.NoError(t, err)
		resp.Body.Close()
		require.NotEqual(t, http.StatusForbidden, resp.StatusCode)
		return resp.TLS.PeerCertificates[0].SerialNumber.Int64()
	}
	c := tlsClient(t, ca, mcCrt, mcKey)
	first := serial(c)

	files := hookTLSFiles(t, ca)
	vol.write(t, files)
	block, _ := pem.Decode(files["tls.crt"])
	leaf, err := x509.ParseCertificate(block.Bytes)
	require.NoError(t, err)
	require.NotEqual(t, first, leaf.SerialNumber.Int64())
	require.Equal(t, leaf.SerialNumber.Int64(), serial(c), "the rotated certificate is served")

	// A new CA (both sides rotated): its client certificate is admitted,
	// one of the old CA no longer.
	ca2 := newTestCA(t, "stackdome hooks CA 2")
	vol.write(t, hookTLSFiles(t, ca2))
	crt2, key2, _ := ca2.issue(t, "metacontroller", x509.ExtKeyUsageClientAuth)
	serial(tlsClient(t, ca2, crt2, key2))
	resp, err := tlsClient(t, ca2, mcCrt, mcKey).Post(base+"/customize", "application/json", strings.NewReader(`{}`))
	if err == nil {
		resp.Body.Close()
		require.Equal(t, http.StatusForbidden, resp.StatusCode, "a client certificate of the replaced CA")
	}
}

// TestBadRotationKeepsThePair: files that do not make a pair (a key of
// another certificate, half-written PEM, a missing file) are refused: the
// previous pair stays served, the failure is counted and logged once per
// bad content, not at every handshake; the next good content is served
// and counted. Reads happen at most once per interval.
func TestBadRotationKeepsThePair(t *testing.T) {
	ca := newTestCA(t, "stackdome hooks CA")
	files := hookTLSFiles(t, ca)
	vol := newSecretVolume(t, files)
	var logs bytes.Buffer
	reg := prometheus.NewRegistry()
	m := newTLSMetrics(reg)
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	settings := hookTLS{certFile: vol.path("tls.crt"), keyFile: vol.path("tls.key"), clientCAFile: vol.path("ca.crt"), reloadInterval: 5 * time.Second}
	r, err := newCertReloader(settings, slog.New(slog.NewTextHandler(&logs, nil)), m, func() time.Time { return now })
	require.NoError(t, err)
	first := r.current().leaf.SerialNumber
	count := func(result string) float64 { return testutil.ToFloat64(m.reloads.WithLabelValues(result)) }

	other := hookTLSFiles(t, ca)
	bad := map[string][]byte{"tls.crt": other["tls.crt"], "tls.key": files["tls.key"], "ca.crt": ca.pem}
	vol.write(t, bad)
	require.Equal(t, first, r.current().leaf.SerialNumber, "not read before the interval")
	require.Zero(t, count("failure"))
	now = now.Add(5 * time.Second)
	require.Equal(t, first, r.current().leaf.SerialNumber, "a mismatched key keeps the pair")
	require.Equal(t, 1.0, count("failure"))
	now = now.Add(5 * time.Second)
	r.current()
	require.Equal(t, 1.0, count("failure"), "the same bad content is counted once")
	require.Equal(t, 1, strings.Count(logs.String(), "hooks TLS not reloaded"))

	vol.write(t, map[string][]byte{"tls.crt": other["tls.crt"][:len(other["tls.crt"])/2], "tls.key": other["tls.key"], "ca.crt": ca.pem})
	now = now.Add(5 * time.Second)
	require.Equal(t, first, r.current().leaf.SerialNumber, "a half-written certificate keeps the pair")
	vol.write(t, map[string][]byte{"tls.crt": other["tls.crt"], "tls.key": other["tls.key"], "ca.crt": other["tls.key"]})
	now = now.Add(5 * time.Second)
	require.Equal(t, first, r.current().leaf.SerialNumber, "a key as the CA keeps the pair")
	require.Equal(t, 3.0, count("failure"))
	require.Zero(t, count("success"))

	vol.write(t, other)
	now = now.Add(5 * time.Second)
	require.NotEqual(t, first, r.current().leaf.SerialNumber, "the good content is served")
	require.Equal(t, 1.0, count("success"))
	require.Equal(t, float64(r.current().leaf.NotAfter.Unix()), testutil.ToFloat64(m.notAfter))
}

// TestStartRefusesABadPair: serve does not start on files that do not make
// a pair and a CA.
func TestStartRefusesABadPair(t *testing.T) {
	ca := newTestCA(t, "stackdome hooks CA")
	files := hookTLSFiles(t, ca)
	files["ca.crt"] = []byte("not a certificate")
	vol := newSecretVolume(t, files)
	err := run(t.Context(), append([]string{"serve", "--listen", "127.0.0.1:0", "--error-pages-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"}, tlsArgsOf(vol)...), nil, io.Discard, io.Discard)
	require.ErrorContains(t, err, "loading the hooks TLS: loading "+vol.path("ca.crt")+": no PEM certificate")
}

// TestRefusedCallerReadsWhy: a caller without a client certificate that
// posts a sync of several megabytes (under --max-body) reads its 403 and
// why, as Metacontroller would without its clientTLS: the body is read
// and dropped before the answer, so the connection is not reset under a
// client still writing.
func TestRefusedCallerReadsWhy(t *testing.T) {
	ca := newTestCA(t, "stackdome hooks CA")
	srv := runServe(t, tlsArgsOf(newSecretVolume(t, hookTLSFiles(t, ca)))...)
	body := bytes.Repeat([]byte(" "), 4<<20)
	for range 5 {
		resp, err := tlsClient(t, ca, nil, nil).Post("https://"+srv.addrs["hooks"]+"/sync", "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		why, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
		require.Contains(t, string(why), "client certificate")
	}
}
