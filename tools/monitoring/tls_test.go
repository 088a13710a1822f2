package monitoring

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// hooksTLS mints what the chart gives a hook replica — a CA, a serving
// certificate for 127.0.0.1 and a client certificate for Metacontroller,
// both signed by the CA — writes the replica's three files into a
// temporary directory, and returns the flags that name them and the client
// configuration that calls the hooks as Metacontroller does. The real
// binary then runs as in a cluster, mutual TLS on, so that every family it
// exports there (stackdome_tls_* among them) is scraped.
func hooksTLS(t *testing.T) (flags []string, client *tls.Config) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "stackdome-hooks-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage, ips ...net.IP) tls.Certificate {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		der, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips,
		}, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	}
	server := leaf(2, "stackdome", x509.ExtKeyUsageServerAuth, net.IPv4(127, 0, 0, 1))
	metacontroller := leaf(3, "metacontroller", x509.ExtKeyUsageClientAuth)

	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(server.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	flags = []string{
		"--tls-cert-file=" + write("tls.crt", "CERTIFICATE", server.Certificate[0]),
		"--tls-key-file=" + write("tls.key", "PRIVATE KEY", keyDER),
		"--tls-client-ca-file=" + write("ca.crt", "CERTIFICATE", caDER),
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	return flags, &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{metacontroller}}
}
