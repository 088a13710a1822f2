package chart

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// hooksTLSArgs are the container's TLS flags at the default mount.
var hooksTLSArgs = []string{
	"--tls-cert-file=/etc/stackdome/hooks-tls/tls.crt",
	"--tls-key-file=/etc/stackdome/hooks-tls/tls.key",
	"--tls-client-ca-file=/etc/stackdome/hooks-tls/ca.crt",
}

func parseCert(t *testing.T, b []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(b)
	if block == nil {
		t.Fatalf("no PEM certificate in %q", b)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestHooksTLSGenerated: by default the chart generates the hooks' CA, a
// serving pair valid for every name Metacontroller may dial
// (<service>.<namespace>, .svc, .svc.cluster.local) and Metacontroller's
// client pair, both signed by the CA; stackdome mounts the serving Secret
// (whole, so rotations land) at the paths its flags name and probes over
// HTTPS; the CompositeController trusts that Secret's ca.crt, presents the
// client Secret, and its paths carry a hash of exactly the CA and client
// certificate it reads.
func TestHooksTLSGenerated(t *testing.T) {
	for name, in := range map[string]install{"defaults": {}, "other release": renderCases["other release"]} {
		t.Run(name, func(t *testing.T) {
			objs := decode(t, render(t, in))
			ns, svc := "stackdome", "stackdome"
			if name == "other release" {
				ns, svc = "platform", "edge-stackdome"
			}
			secret := func(suffix string) *corev1.Secret { return findNamed[*corev1.Secret](t, objs, "Secret", svc+suffix) }
			ca, server, client := secret("-hooks-ca"), secret("-hooks-tls"), secret("-metacontroller-client")
			caCert := parseCert(t, ca.Data["tls.crt"])
			if !caCert.IsCA {
				t.Errorf("the CA Secret's certificate is no CA")
			}
			roots := x509.NewCertPool()
			roots.AddCert(caCert)
			for _, s := range []*corev1.Secret{server, client} {
				if string(s.Data["ca.crt"]) != string(ca.Data["tls.crt"]) {
					t.Errorf("%s: ca.crt is not the CA", s.Name)
				}
				if s.Type != corev1.SecretTypeTLS || len(s.Data["tls.key"]) == 0 {
					t.Errorf("%s: type %s, want a kubernetes.io/tls pair", s.Name, s.Type)
				}
			}
			leaf := parseCert(t, server.Data["tls.crt"])
			for _, dns := range []string{svc + "." + ns, svc + "." + ns + ".svc", svc + "." + ns + ".svc.cluster.local"} {
				if _, err := leaf.Verify(x509.VerifyOptions{DNSName: dns, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
					t.Errorf("the serving certificate for %s: %v", dns, err)
				}
			}
			if _, err := parseCert(t, client.Data["tls.crt"]).Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
				t.Errorf("the client certificate: %v", err)
			}

			dep := findNamed[*appsv1.Deployment](t, objs, "Deployment", svc)
			pod := dep.Spec.Template.Spec
			c := pod.Containers[0]
			for _, a := range hooksTLSArgs {
				if !slices.Contains(c.Args, a) {
					t.Errorf("args lack %s: %q", a, c.Args)
				}
			}
			if slices.Contains(c.Args, "--insecure-plain-http") {
				t.Error("TLS and --insecure-plain-http")
			}
			if len(pod.Volumes) != 1 || pod.Volumes[0].Secret == nil || pod.Volumes[0].Secret.SecretName != server.Name {
				t.Fatalf("volumes %+v, want the Secret %s", pod.Volumes, server.Name)
			}
			if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/etc/stackdome/hooks-tls" || c.VolumeMounts[0].SubPath != "" || !c.VolumeMounts[0].ReadOnly {
				t.Errorf("mounts %+v: want the whole Secret read-only at /etc/stackdome/hooks-tls (a subPath is never updated)", c.VolumeMounts)
			}
			for probe, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
				if p.HTTPGet == nil || p.HTTPGet.Scheme != corev1.URISchemeHTTPS {
					t.Errorf("%s probe %+v: want httpGet over HTTPS", probe, p.HTTPGet)
				}
			}

			cc := find[*compositeController](t, objs, "CompositeController")
			sum := sha256.Sum256([]byte(base64.StdEncoding.EncodeToString(ca.Data["tls.crt"]) + "\n" + base64.StdEncoding.EncodeToString(client.Data["tls.crt"])))
			hash := hex.EncodeToString(sum[:])[:16]
			for hook, h := range map[string]*ccHook{"sync": cc.Spec.Hooks.Sync, "customize": cc.Spec.Hooks.Customize} {
				if want := "/" + hook + "?credentials=" + hash; h.Webhook.Path != want {
					t.Errorf("%s path %q, want %q: the hash of the CA and the client certificate", hook, h.Webhook.Path, want)
				}
				if h.Webhook.Service.Protocol != "https" || h.Webhook.CABundle == nil || h.Webhook.CABundle.SecretRef.Name != server.Name ||
					h.Webhook.ClientTLS == nil || h.Webhook.ClientTLS.SecretRef.Name != client.Name || h.Webhook.ClientTLS.SecretRef.Namespace != ns {
					t.Errorf("%s webhook %+v: want https, caBundle of %s, clientTLS of %s/%s", hook, h.Webhook, server.Name, ns, client.Name)
				}
			}
		})
	}
}

// TestHooksTLSDisabled: hooks.tls.enabled=false is plain HTTP, as the
// installer asked: no Secret, --insecure-plain-http, probes and the
// CompositeController over http, and NOTES warns.
func TestHooksTLSDisabled(t *testing.T) {
	in := install{set: []string{"hooks.tls.enabled=false"}}
	objs := decode(t, render(t, in))
	for _, o := range objs {
		if o.kind == "Secret" {
			t.Errorf("%s rendered with TLS off", o.id())
		}
	}
	c := findNamed[*appsv1.Deployment](t, objs, "Deployment", "stackdome").Spec.Template.Spec.Containers[0]
	if !slices.Contains(c.Args, "--insecure-plain-http") || slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--tls-cert-file") }) {
		t.Errorf("args %q: want --insecure-plain-http and no TLS flag", c.Args)
	}
	if c.ReadinessProbe.HTTPGet.Scheme == corev1.URISchemeHTTPS || len(c.VolumeMounts) != 0 {
		t.Errorf("plain HTTP probes and no mount, got %+v %+v", c.ReadinessProbe.HTTPGet, c.VolumeMounts)
	}
	cc := find[*compositeController](t, objs, "CompositeController")
	if w := cc.Spec.Hooks.Sync.Webhook; w.Service.Protocol != "http" || w.Path != "/sync" || w.CABundle != nil || w.ClientTLS != nil {
		t.Errorf("sync webhook %+v: want plain http", w)
	}
	if n := notes(t, in); !strings.Contains(n, "WARNING: hooks.tls.enabled=false") {
		t.Errorf("NOTES do not warn of plain HTTP:\n%s", n)
	}
	if n := notes(t, install{}); strings.Contains(n, "hooks.tls.enabled=false") {
		t.Errorf("NOTES warn of plain HTTP with TLS on:\n%s", n)
	}
}

// TestHooksTLSCertManager: with cert-manager, the chart renders the
// self-signed Issuer, the CA Certificate and its Issuer, and the serving
// and client Certificates (server and client usage apart) writing the
// Secrets the Deployment and the CompositeController name; it generates
// no Secret itself. Without cert-manager's API it refuses, saying so.
func TestHooksTLSCertManager(t *testing.T) {
	set := []string{"hooks.tls.certManager.enabled=true"}
	objs := decode(t, render(t, install{set: set, apiVersions: append(slices.Clone(clusterAPIs), "cert-manager.io/v1")}))
	var got []string
	for _, o := range objs {
		switch o.kind {
		case "Secret":
			t.Errorf("%s: cert-manager writes the Secrets", o.id())
		case "Issuer", "Certificate":
			got = append(got, o.id())
		}
	}
	slices.Sort(got)
	want := []string{"Certificate stackdome/stackdome-hooks-ca", "Certificate stackdome/stackdome-hooks-tls", "Certificate stackdome/stackdome-metacontroller-client",
		"Issuer stackdome/stackdome-hooks-ca", "Issuer stackdome/stackdome-hooks-selfsigned"}
	if !slices.Equal(want, got) {
		t.Errorf("cert-manager objects %q, want %q", got, want)
	}
	ca := findNamed[*certificate](t, objs, "Certificate", "stackdome-hooks-ca").Spec
	server := findNamed[*certificate](t, objs, "Certificate", "stackdome-hooks-tls").Spec
	client := findNamed[*certificate](t, objs, "Certificate", "stackdome-metacontroller-client").Spec
	if !ca.IsCA || ca.IssuerRef.Name != "stackdome-hooks-selfsigned" || server.IssuerRef.Name != "stackdome-hooks-ca" || client.IssuerRef.Name != "stackdome-hooks-ca" {
		t.Errorf("issuers: CA %+v, server %+v, client %+v", ca, server.IssuerRef, client.IssuerRef)
	}
	if findNamed[*issuer](t, objs, "Issuer", "stackdome-hooks-ca").Spec.CA.SecretName != ca.SecretName {
		t.Errorf("the CA Issuer does not sign with the CA Certificate's Secret %s", ca.SecretName)
	}
	if server.SecretName != "stackdome-hooks-tls" || client.SecretName != "stackdome-metacontroller-client" {
		t.Errorf("secret names %v, %v", server.SecretName, client.SecretName)
	}
	if got := strings.Join(server.DNSNames, ","); got != "stackdome,stackdome.stackdome,stackdome.stackdome.svc,stackdome.stackdome.svc.cluster.local" {
		t.Errorf("serving dnsNames %s", got)
	}
	if !slices.Equal(server.Usages, []string{"digital signature", "server auth"}) || !slices.Equal(client.Usages, []string{"digital signature", "client auth"}) {
		t.Errorf("usages: server %v, client %v", server.Usages, client.Usages)
	}
	if v := findNamed[*appsv1.Deployment](t, objs, "Deployment", "stackdome").Spec.Template.Spec.Volumes; len(v) != 1 || v[0].Secret.SecretName != "stackdome-hooks-tls" {
		t.Errorf("volumes %+v", v)
	}

	_, err := runHelm(t, install{set: set}.args("template", "--include-crds")...)
	if got, want := failMessage(err), "hooks.tls.certManager.enabled: this cluster does not serve cert-manager.io/v1 (install cert-manager first; rendering without a cluster: pass --api-versions cert-manager.io/v1)"; got != want {
		t.Errorf("without cert-manager: %q, want %q", got, want)
	}
}

// certificate and issuer are the cert-manager.io/v1 fields the chart
// writes (decoded strictly: a misspelt field fails).
type certificate struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		IsCA        bool     `json:"isCA"`
		CommonName  string   `json:"commonName"`
		SecretName  string   `json:"secretName"`
		DNSNames    []string `json:"dnsNames"`
		Duration    string   `json:"duration"`
		RenewBefore string   `json:"renewBefore"`
		Usages      []string `json:"usages"`
		PrivateKey  struct {
			Algorithm      string `json:"algorithm"`
			Size           int    `json:"size"`
			RotationPolicy string `json:"rotationPolicy"`
		} `json:"privateKey"`
		IssuerRef struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"issuerRef"`
	} `json:"spec"`
}

type issuer struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		SelfSigned *struct{} `json:"selfSigned"`
		CA         *struct {
			SecretName string `json:"secretName"`
		} `json:"ca"`
	} `json:"spec"`
}

// TestHooksTLSExistingSecrets: the installer's own Secrets are named where
// the chart's would be, and nothing is generated; one without the other,
// or with cert-manager too, is refused.
func TestHooksTLSExistingSecrets(t *testing.T) {
	objs := decode(t, render(t, install{set: []string{"hooks.tls.existingSecret=mine-tls", "hooks.tls.existingClientSecret=mine-client"}}))
	for _, o := range objs {
		if o.kind == "Secret" || o.kind == "Certificate" {
			t.Errorf("%s rendered beside existing Secrets", o.id())
		}
	}
	if v := findNamed[*appsv1.Deployment](t, objs, "Deployment", "stackdome").Spec.Template.Spec.Volumes; len(v) != 1 || v[0].Secret.SecretName != "mine-tls" {
		t.Errorf("volumes %+v", v)
	}
	w := find[*compositeController](t, objs, "CompositeController").Spec.Hooks.Sync.Webhook
	if w.CABundle.SecretRef.Name != "mine-tls" || w.ClientTLS.SecretRef.Name != "mine-client" {
		t.Errorf("webhook %+v", w)
	}
	for set, want := range map[string]string{
		"hooks.tls.existingSecret=mine-tls":                                                              "hooks.tls.existingSecret and hooks.tls.existingClientSecret go together: the serving pair with its ca.crt, and Metacontroller's client pair signed by that CA",
		"hooks.tls.existingClientSecret=mine-client":                                                     "hooks.tls.existingSecret and hooks.tls.existingClientSecret go together: the serving pair with its ca.crt, and Metacontroller's client pair signed by that CA",
		"hooks.tls.existingSecret=a,hooks.tls.existingClientSecret=b,hooks.tls.certManager.enabled=true": "hooks.tls.existingSecret and hooks.tls.certManager.enabled: choose one source of the hooks' certificates",
	} {
		_, err := runHelm(t, install{set: []string{set}}.args("template", "--include-crds")...)
		if got := failMessage(err); got != want {
			t.Errorf("%s: %q, want %q", set, got, want)
		}
	}
}
