package main

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Who may call the hooks (docs/design.md, "Who may call"): the hooks port
// speaks HTTPS, and POST /sync and /customize answer only a caller whose
// client certificate chains to the client CA (mutual TLS: Metacontroller's
// clientTLS). GET /healthz and /readyz stay open to any caller, the
// kubelet's probes, which present no certificate. The serving pair and the
// client CA are files (a mounted Secret, which the kubelet updates by a
// symlink swap); they are read again when they change, without a restart.

// hookTLS is the TLS settings of the hooks port, from the --tls-* flags.
type hookTLS struct {
	certFile, keyFile, clientCAFile string
	reloadInterval                  time.Duration
	insecurePlainHTTP               bool
	required                        bool // serve: the hooks refuse to run without TLS or the opt-out
}

// enabled reports whether the hooks port speaks TLS.
func (t hookTLS) enabled() bool { return t.certFile != "" }

// defineTLSFlags defines the flags of the hooks port's TLS; required: the
// command serves the hooks (serve; sync listens on nothing).
func defineTLSFlags(fs *flag.FlagSet, t *hookTLS, required bool) {
	t.required = required
	fs.StringVar(&t.certFile, "tls-cert-file", "", "PEM certificate (chain) the hooks port serves; valid for the name Metacontroller dials, <service>.<namespace>. Read again when it changes")
	fs.StringVar(&t.keyFile, "tls-key-file", "", "PEM private key of --tls-cert-file")
	fs.StringVar(&t.clientCAFile, "tls-client-ca-file", "", "PEM CA certificate(s) a caller's client certificate must chain to for POST /sync and /customize (Metacontroller's clientTLS); /healthz and /readyz need none")
	fs.DurationVar(&t.reloadInterval, "tls-reload-interval", 5*time.Second, "how often, at most, a TLS handshake reads the three files again to pick up a rotated certificate or CA")
	fs.BoolVar(&t.insecurePlainHTTP, "insecure-plain-http", false, "serve the hooks over plain HTTP and answer any caller that reaches the port (no --tls-* flag). Secrets in sync requests then cross the pod network unencrypted: only where a NetworkPolicy is enforced and nothing else shares the network")
}

// validate refuses TLS settings that cannot run: a half-configured TLS
// (one of the three files without the others), TLS and the opt-out
// together, or, when required, neither of them.
func (t hookTLS) validate(serveHooks bool) error {
	if !t.required {
		return nil // stackdome sync: nothing served
	}
	given := map[string]bool{"--tls-cert-file": t.certFile != "", "--tls-key-file": t.keyFile != "", "--tls-client-ca-file": t.clientCAFile != ""}
	var set, unset []string
	for _, f := range []string{"--tls-cert-file", "--tls-key-file", "--tls-client-ca-file"} {
		if given[f] {
			set = append(set, f)
		} else {
			unset = append(unset, f)
		}
	}
	switch {
	case t.insecurePlainHTTP && len(set) > 0:
		return fmt.Errorf("--insecure-plain-http with %s: choose TLS or plain HTTP", set[0])
	case len(set) > 0 && len(unset) > 0:
		return fmt.Errorf("%s without %s: TLS needs the serving certificate, its key and the client CA", set[0], unset[0])
	case t.reloadInterval <= 0:
		return fmt.Errorf("--tls-reload-interval %s: must be positive", t.reloadInterval)
	case serveHooks && len(set) == 0 && !t.insecurePlainHTTP:
		return errors.New("the hooks need --tls-cert-file, --tls-key-file and --tls-client-ca-file (mutual TLS with Metacontroller), or --insecure-plain-http to answer any caller in plain HTTP")
	}
	return nil
}

// tlsMetrics count the reloads of the serving pair and client CA.
type tlsMetrics struct {
	reloads  *prometheus.CounterVec
	notAfter prometheus.Gauge
}

func newTLSMetrics(reg prometheus.Registerer) tlsMetrics {
	m := tlsMetrics{
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stackdome_tls_reloads_total",
			Help: "Reads of changed --tls-* files: result success (now served) or failure (the files do not make a valid pair and CA; the previous ones are kept).",
		}, []string{"result"}),
		notAfter: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "stackdome_tls_certificate_not_after_seconds",
			Help: "Expiry (Unix seconds) of the serving certificate the hooks port presents.",
		}),
	}
	m.reloads.WithLabelValues("success")
	m.reloads.WithLabelValues("failure")
	reg.MustRegister(m.reloads, m.notAfter)
	return m
}

// certReloader serves the hooks port's TLS from three files: the serving
// pair and the client CA. A handshake reads them again when at least
// interval has passed since the last read (one handshake reads, the others
// go on with what is loaded), so a rotated Secret is served from the next
// handshakes after it lands, with no goroutine and no restart. Files whose
// content does not make a valid pair and CA are refused: the previous
// ones stay served, an error is logged and counted once per bad content.
type certReloader struct {
	certFile, keyFile, caFile string
	interval                  time.Duration
	now                       func() time.Time
	log                       *slog.Logger
	metrics                   tlsMetrics

	state   atomic.Pointer[tlsState]
	checked atomic.Int64 // UnixNano of the last read
	reading sync.Mutex   // one read at a time; TryLock: a handshake never waits for one
	badSum  [sha256.Size]byte
}

// tlsState is one loaded pair and CA and the server config made of them.
type tlsState struct {
	sum    [sha256.Size]byte
	config *tls.Config
	leaf   *x509.Certificate
}

// newCertReloader loads the files once; start-up fails if they do not make
// a valid pair and CA.
func newCertReloader(t hookTLS, log *slog.Logger, m tlsMetrics, now func() time.Time) (*certReloader, error) {
	r := &certReloader{certFile: t.certFile, keyFile: t.keyFile, caFile: t.clientCAFile, interval: t.reloadInterval, now: now, log: log, metrics: m}
	s, err := r.load()
	if err != nil {
		return nil, err
	}
	r.state.Store(s)
	r.checked.Store(now().UnixNano())
	m.notAfter.Set(float64(s.leaf.NotAfter.Unix()))
	return r, nil
}

// serverConfig is the tls.Config of the hooks listener: each handshake gets
// the config of the current files.
func (r *certReloader) serverConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return r.current().config, nil
		},
	}
}

// current returns the loaded state, reading the files first if interval
// has passed and no other handshake is reading them.
func (r *certReloader) current() *tlsState {
	now := r.now()
	if now.UnixNano()-r.checked.Load() >= int64(r.interval) && r.reading.TryLock() {
		r.checked.Store(now.UnixNano())
		r.reload()
		r.reading.Unlock()
	}
	return r.state.Load()
}

// reload reads the files and, if their content changed and is valid,
// serves it. Called with r.reading held.
func (r *certReloader) reload() {
	b, sum, err := r.read()
	if err == nil && (sum == r.state.Load().sum || sum == r.badSum) {
		return
	}
	var s *tlsState
	if err == nil {
		s, err = r.parse(b, sum)
	}
	if err != nil {
		// Logged and counted once per bad content (a read error once until
		// the files read again), not at every handshake.
		if sum != r.badSum {
			r.badSum = sum
			r.metrics.reloads.WithLabelValues("failure").Inc()
			r.log.Error("hooks TLS not reloaded: keeping the previous certificate and CA", "err", err)
		}
		return
	}
	r.state.Store(s)
	r.metrics.reloads.WithLabelValues("success").Inc()
	r.metrics.notAfter.Set(float64(s.leaf.NotAfter.Unix()))
	r.log.Info("hooks TLS reloaded", "notAfter", s.leaf.NotAfter.UTC().Format(time.RFC3339), "subject", s.leaf.Subject.String())
}

// load reads and parses the three files.
func (r *certReloader) load() (*tlsState, error) {
	b, sum, err := r.read()
	if err != nil {
		return nil, err
	}
	return r.parse(b, sum)
}

// read reads the certificate, key and CA files and hashes their bytes
// together; each file is read once, so the sum is of the bytes parsed.
func (r *certReloader) read() (b [3][]byte, sum [sha256.Size]byte, err error) {
	h := sha256.New()
	for i, f := range []string{r.certFile, r.keyFile, r.caFile} {
		if b[i], err = os.ReadFile(f); err != nil {
			return b, sum, fmt.Errorf("reading %s: %w", f, err)
		}
		fmt.Fprintf(h, "%d:", len(b[i]))
		h.Write(b[i])
	}
	return b, [sha256.Size]byte(h.Sum(nil)), nil
}

// parse makes the state of the certificate, key and CA bytes b.
func (r *certReloader) parse(b [3][]byte, sum [sha256.Size]byte) (*tlsState, error) {
	pair, err := tls.X509KeyPair(b[0], b[1])
	if err != nil {
		return nil, fmt.Errorf("loading %s and %s: %w", r.certFile, r.keyFile, err)
	}
	pool := x509.NewCertPool()
	if bytes.Contains(b[2], []byte("PRIVATE KEY")) || !pool.AppendCertsFromPEM(b[2]) {
		return nil, fmt.Errorf("loading %s: no PEM certificate, or a private key in it", r.caFile)
	}
	return &tlsState{
		sum:  sum,
		leaf: pair.Leaf,
		config: &tls.Config{
			MinVersion:   tls.VersionTLS12,
			Certificates: []tls.Certificate{pair},
			ClientCAs:    pool,
			// Verified when given, so that the kubelet's probes (no
			// certificate) complete the handshake; requireClientCert
			// refuses the hooks to a caller without one.
			ClientAuth: tls.VerifyClientCertIfGiven,
			// HTTP/1.1 only, as on the plain port: the server's connection
			// and header limits apply as they do there.
			NextProtos: []string{"http/1.1"},
		},
	}, nil
}

// requireClientCert answers 403 to any request but GET /healthz and
// /readyz whose connection carries no client certificate verified against
// the client CA, and closes the connection. It reads and drops the body
// first, up to maxBody (the hooks' own limit), so that a caller still
// writing a sync reads why instead of a reset connection.
func requireClientCert(next http.Handler, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" && r.URL.Path != "/readyz" && (r.TLS == nil || len(r.TLS.VerifiedChains) == 0) {
			_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, maxBody))
			w.Header().Set("Connection", "close")
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte("forbidden: the hooks answer only a client certificate of the client CA (Metacontroller's clientTLS)\n"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// hookListenerTLS is the TLS config of the hooks listener, nil for plain
// HTTP (the opt-out, warned about). It loads the files once: start-up
// fails on a pair or CA that does not load.
func hookListenerTLS(t hookTLS, log *slog.Logger, reg prometheus.Registerer) (*tls.Config, error) {
	if !t.enabled() {
		log.Warn("--insecure-plain-http: the hooks answer any caller in plain HTTP, and the Secrets in sync requests cross the pod network unencrypted; serve them over mutual TLS (--tls-cert-file, --tls-key-file, --tls-client-ca-file; the chart's hooks.tls)")
		return nil, nil
	}
	r, err := newCertReloader(t, log, newTLSMetrics(reg), time.Now)
	if err != nil {
		return nil, fmt.Errorf("loading the hooks TLS: %w", err)
	}
	s := r.state.Load()
	log.Info("hooks over mutual TLS", "notAfter", s.leaf.NotAfter.UTC().Format(time.RFC3339), "subject", s.leaf.Subject.String(), "reloadInterval", t.reloadInterval.String())
	return r.serverConfig(), nil
}
