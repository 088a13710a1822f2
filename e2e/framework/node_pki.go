//go:build e2e

package framework

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// issue signs a certificate for cn in organizations orgs (Kubernetes reads
// them as user and groups) with the cluster CA, writes <dir>/<name>.crt and
// .key, and returns their paths. With ips it is a serving certificate for
// those addresses, otherwise a client certificate.
func (p *pki) issue(dir, name, cn string, orgs []string, ips []net.IP) (certFile, keyFile string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("generating key for %s: %w", name, err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return "", "", fmt.Errorf("serial for %s: %w", name, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if len(ips) > 0 {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = ips
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		return "", "", fmt.Errorf("signing certificate for %s: %w", name, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", fmt.Errorf("encoding key for %s: %w", name, err)
	}
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return "", "", fmt.Errorf("writing %s: %w", certFile, err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return "", "", fmt.Errorf("writing %s: %w", keyFile, err)
	}
	return certFile, keyFile, nil
}

// writeCertKubeconfig writes a kubeconfig that authenticates with a client
// certificate.
func writeCertKubeconfig(path, server, caFile, certFile, keyFile string) error {
	cfg := fmt.Sprintf(`{
  "apiVersion": "v1",
  "kind": "Config",
  "clusters": [{"name": "e2e", "cluster": {"server": %q, "certificate-authority": %q}}],
  "users": [{"name": "node", "user": {"client-certificate": %q, "client-key": %q}}],
  "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": "node"}}],
  "current-context": "e2e"
}
`, server, caFile, certFile, keyFile)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}
