package main

import (
	"io"
	"log/slog"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/stackdome/stackdome/hooks"
)

// noEnv is an environment with no STACKDOME_* variable.
func noEnv(string) (string, bool) { return "", false }

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

var configCmp = cmp.Options{
	cmp.AllowUnexported(config{}, httpLimits{}, hookTLS{}),
	cmp.Comparer(func(a, b netip.Prefix) bool { return a == b }),
	cmpopts.EquateEmpty(),
}

// defaultConfig is the whole configuration of `stackdome serve` with no
// flag and no variable, spelled out: a changed default shows here.
func defaultConfig() config {
	return config{
		listen: ":8080", errorPagesListen: ":8082", metricsListen: ":8081",
		hooks: hooks.Config{
			EntryPoints:    []string{"websecure"},
			ErrorService:   hooks.ErrorService{Name: "stackdome-error-pages", Namespace: "stackdome", Port: 8082},
			PortCheckGrace: 3 * time.Minute, VerdictRequeue: 10 * time.Second, BootGrace: 5 * time.Minute, ChildSettle: 30 * time.Second,
			HTTPEntryPoint: "web",
			NetworkPolicy: hooks.NetworkPolicy{
				StackdomeNamespace: "stackdome", TraefikNamespace: "traefik",
				StackdomePods: map[string]string{"app.kubernetes.io/name": "stackdome", "app.kubernetes.io/instance": "stackdome", "app.kubernetes.io/component": "controller"},
			},
		},
		portRecheck: 5 * time.Minute, dialTimeout: 2 * time.Second, verdictTTL: time.Hour,
		dialWorkers: 32, dialQueue: 1024, verdictMax: 50_000,
		logFormat: "json", logLevel: slog.LevelInfo,
		shutdownTimeout: 25 * time.Second, drainDelay: 5 * time.Second,
		maxBody: hooks.MaxBody, maxPods: 10000, serveHooks: true, servePages: true,
		http: httpLimits{readHeaderTimeout: 5 * time.Second, readTimeout: 5 * time.Second, writeTimeout: 10 * time.Second,
			idleTimeout: 120 * time.Second, maxHeaderBytes: 16 << 10, maxConns: 128},
		pagesHTTP: httpLimits{readHeaderTimeout: 2 * time.Second, readTimeout: 5 * time.Second, writeTimeout: 10 * time.Second,
			idleTimeout: 10 * time.Second, maxHeaderBytes: 16 << 10, maxConns: 512},
		metricsHTTP: httpLimits{readHeaderTimeout: 5 * time.Second, readTimeout: 5 * time.Second, writeTimeout: 10 * time.Second,
			idleTimeout: 120 * time.Second, maxHeaderBytes: 16 << 10, maxConns: 16},
		tls: hookTLS{certFile: "tls.crt", keyFile: "tls.key", clientCAFile: "ca.crt", reloadInterval: 5 * time.Second, required: true},
	}
}

// tlsArgs are the TLS flags every serve command line of TestParseFlags
// starts with: serve refuses to run without them (or the opt-out).
var tlsArgs = []string{"--tls-cert-file", "tls.crt", "--tls-key-file", "tls.key", "--tls-client-ca-file", "ca.crt"}

// TestParseFlags compares the whole configuration a command line and an
// environment give.
func TestParseFlags(t *testing.T) {
	tests := map[string]struct {
		cmd  string
		args []string
		env  map[string]string
		want func(*config)
	}{
		"defaults": {cmd: "serve", want: func(*config) {}},
		"every kind of flag": {
			cmd: "serve",
			args: []string{"--listen", "127.0.0.1:1", "--metrics-listen", "127.0.0.1:2", "--port-check-grace", "45s", "--entry-points", " web , websecure,", "--dial-allow", "10.1.2.3/16, fd00::/8",
				"--error-service-port", "9000", "--log-level", "debug", "--log-format", "text", "--dial-workers", "4", "--max-header-bytes", "100"},
			want: func(c *config) {
				c.listen = "127.0.0.1:1"
				c.metricsListen = "127.0.0.1:2"
				c.hooks.PortCheckGrace = 45 * time.Second
				c.hooks.EntryPoints = []string{"web", "websecure"}
				c.dialAllow = []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16"), netip.MustParsePrefix("fd00::/8")}
				c.hooks.ErrorService.Port = 9000
				c.logLevel = slog.LevelDebug
				c.logFormat = "text"
				c.dialWorkers = 4
				c.http.maxHeaderBytes = 100
				c.metricsHTTP.maxHeaderBytes = 100
			},
		},
		"each port's limits": {
			cmd: "serve",
			args: []string{"--max-conns", "7", "--error-pages-max-conns", "9", "--error-pages-max-header-bytes", "4096", "--read-timeout", "3s",
				"--error-pages-read-header-timeout", "1s", "--error-pages-idle-timeout", "3s"},
			env: map[string]string{"STACKDOME_METRICS_MAX_CONNS": "2"},
			want: func(c *config) {
				c.http.maxConns, c.http.readTimeout = 7, 3*time.Second
				c.pagesHTTP = httpLimits{readHeaderTimeout: time.Second, readTimeout: 3 * time.Second, writeTimeout: 10 * time.Second,
					idleTimeout: 3 * time.Second, maxHeaderBytes: 4096, maxConns: 9}
				c.metricsHTTP.maxConns, c.metricsHTTP.readTimeout = 2, 3*time.Second
			},
		},
		"no ConfigMaps related": {cmd: "serve", args: []string{"--relate-configmaps=false"}, want: func(c *config) {
			c.hooks.Unrelated.ConfigMaps = true
		}},
		"no error service": {cmd: "serve", args: []string{"--error-service-name="}, want: func(c *config) {
			c.hooks.ErrorService.Name = ""
			c.hooks.NoErrorService = true
		}},
		"pods and routes": {cmd: "serve", args: []string{"--pod-security-defaults=false", "--tls-cert-resolver", "letsencrypt", "--http-entry-point", "http", "--error-service-cross-namespace", "--relate-secrets=false"},
			want: func(c *config) {
				c.hooks.NoPodSecurityDefaults = true
				c.hooks.Unrelated.Secrets = true
				c.hooks.DefaultCertResolver = "letsencrypt"
				c.hooks.HTTPEntryPoint = "http"
				c.hooks.ErrorService.CrossNamespace = true
			}},
		"environment": {cmd: "serve", env: map[string]string{"STACKDOME_BOOT_GRACE": "1m", "STACKDOME_DIAL_ALLOW": "127.0.0.0/8", "STACKDOME_ERROR_SERVICE_NAME": "", "STACKDOME_METRICS_LISTEN": ":9100"},
			want: func(c *config) {
				c.metricsListen = ":9100"
				c.hooks.BootGrace = time.Minute
				c.dialAllow = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
				c.hooks.ErrorService.Name = ""
				c.hooks.NoErrorService = true
			}},
		"sync": {cmd: "sync", args: []string{"-f", "req.json", "--now", "2026-11-29T12:00:00Z"}, want: func(c *config) {
			c.syncFile = "req.json"
			c.syncNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
		}},
		"sync defaults": {cmd: "sync", want: func(c *config) { c.syncFile = "-" }},
		"render": {cmd: "render", args: []string{"-f", "app.yaml", "--namespace", "shop", "--now", "2026-11-29T12:00:00Z", "--network-policy-default"},
			want: func(c *config) {
				c.renderFile, c.renderNamespace = "app.yaml", "shop"
				c.syncNow = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
				c.hooks.NetworkPolicy.Default = true
			}},
		"render defaults": {cmd: "render", want: func(c *config) { c.renderFile, c.renderNamespace = "-", "default" }},
		"platform defaults": {cmd: "serve", args: []string{"--default-requests", "memory=128Mi,cpu=100m", "--network-policy-default",
			"--network-policy-stackdome-namespace", "platform", "--network-policy-stackdome-pods", "app=sd", "--network-policy-traefik-namespace", "ingress", "--network-policy-traefik-pods", "app.kubernetes.io/name=traefik", "--pod-monitors"},
			want: func(c *config) {
				c.hooks.DefaultResources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")}
				c.hooks.NetworkPolicy = hooks.NetworkPolicy{Default: true, StackdomeNamespace: "platform", StackdomePods: map[string]string{"app": "sd"},
					TraefikNamespace: "ingress", TraefikPods: map[string]string{"app.kubernetes.io/name": "traefik"}}
				c.hooks.PodMonitors = true
			}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			want := defaultConfig()
			args := tc.args
			if tc.cmd == "serve" {
				args = append(slices.Clone(tlsArgs), args...)
			} else {
				want.tls = hookTLS{reloadInterval: 5 * time.Second}
			}
			tc.want(&want)
			got, err := parseFlags(tc.cmd, args, envOf(tc.env), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got, configCmp); d != "" {
				t.Errorf("config (-want +got):\n%s", d)
			}
		})
	}
}

// TestOverlayEnv: a flag on the command line wins over its variable, a
// variable over the default; a value a flag refuses is an error naming the
// variable, and no variable after it (in name order) is read.
func TestOverlayEnv(t *testing.T) {
	tests := map[string]struct {
		args    []string
		env     map[string]string
		want    map[string]string // flag → value after the overlay
		wantErr string
	}{
		"default when neither": {
			want: map[string]string{"listen": ":8080", "verdict-ttl": "1h0m0s"},
		},
		"variable over default": {
			env:  map[string]string{"STACKDOME_LISTEN": ":9999", "STACKDOME_VERDICT_TTL": "2h"},
			want: map[string]string{"listen": ":9999", "verdict-ttl": "2h0m0s"},
		},
		"flag over variable": {
			args: []string{"--listen", ":7000"},
			env:  map[string]string{"STACKDOME_LISTEN": ":9999", "STACKDOME_VERDICT_TTL": "2h"},
			want: map[string]string{"listen": ":7000", "verdict-ttl": "2h0m0s"},
		},
		"flag given as its default still wins": {
			args: []string{"--listen=:8080"},
			env:  map[string]string{"STACKDOME_LISTEN": ":9999"},
			want: map[string]string{"listen": ":8080"},
		},
		"empty variable is a value": {
			env:  map[string]string{"STACKDOME_LISTEN": ""},
			want: map[string]string{"listen": ""},
		},
		"only STACKDOME_ names with underscores": {
			env:  map[string]string{"LISTEN": ":1", "STACKDOME_LISTEN_": ":2", "STACKDOME_VERDICT-TTL": "2h", "stackdome_listen": ":3"},
			want: map[string]string{"listen": ":8080", "verdict-ttl": "1h0m0s"},
		},
		"refused value": {
			env:     map[string]string{"STACKDOME_DIAL_WORKERS": "abc", "STACKDOME_LISTEN": ":9999"},
			want:    map[string]string{"listen": ":8080"},
			wantErr: `STACKDOME_DIAL_WORKERS="abc": parse error`,
		},
		"refused value of a flag given is never read": {
			args: []string{"--dial-workers", "3"},
			env:  map[string]string{"STACKDOME_DIAL_WORKERS": "abc"},
			want: map[string]string{"dial-workers": "3"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var c config
			var raw rawFlags
			fs := defineFlags("serve", &c, &raw, io.Discard)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			err := overlayEnv(fs, envOf(tc.env))
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if d := cmp.Diff(tc.wantErr, gotErr); d != "" {
				t.Errorf("error (-want +got):\n%s", d)
			}
			got := map[string]string{}
			for f := range tc.want {
				got[f] = fs.Lookup(f).Value.String()
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("flag values (-want +got):\n%s", d)
			}
		})
	}
}

// TestEnvName: the variable of a flag is its name in upper case with
// underscores, as --help says.
func TestEnvName(t *testing.T) {
	got := map[string]string{}
	for _, f := range []string{"port-check-grace", "f", "error-pages-listen", "metrics-listen"} {
		got[f] = envName(f)
	}
	want := map[string]string{"port-check-grace": "STACKDOME_PORT_CHECK_GRACE", "f": "STACKDOME_F", "error-pages-listen": "STACKDOME_ERROR_PAGES_LISTEN", "metrics-listen": "STACKDOME_METRICS_LISTEN"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("variables (-want +got):\n%s", d)
	}
}

// TestValidate: each setting that cannot run is refused with the whole
// message below, naming its flag; the environment's values are checked the
// same way. The first refusal in validate's order wins.
func TestValidate(t *testing.T) {
	tests := map[string]struct {
		cmd  string
		args []string
		env  map[string]string
		want string
	}{
		"now":                           {cmd: "sync", args: []string{"--now", "yesterday"}, want: `--now: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"`},
		"dial-allow length":             {args: []string{"--dial-allow", "10.0.0.0/33"}, want: `--dial-allow: parsing --dial-allow entry "10.0.0.0/33" (want a CIDR such as 10.0.0.0/8): netip.ParsePrefix("10.0.0.0/33"): prefix length out of range`},
		"dial-allow bare IP":            {args: []string{"--dial-allow", "10.0.0.1"}, want: `--dial-allow: parsing --dial-allow entry "10.0.0.1" (want a CIDR such as 10.0.0.0/8): netip.ParsePrefix("10.0.0.1"): no '/'`},
		"dial-allow from env":           {env: map[string]string{"STACKDOME_DIAL_ALLOW": "10.0.0.0/8,pods"}, want: `--dial-allow: parsing --dial-allow entry "pods" (want a CIDR such as 10.0.0.0/8): netip.ParsePrefix("pods"): no '/'`},
		"entry-points":                  {args: []string{"--entry-points", " , "}, want: "--entry-points: at least one entry point is required"},
		"error-service-port 0":          {args: []string{"--error-service-port", "0"}, want: "--error-service-port 0: must be between 1 and 65535"},
		"error-service-port":            {args: []string{"--error-service-port", "65536"}, want: "--error-service-port 65536: must be between 1 and 65535"},
		"log-level":                     {args: []string{"--log-level", "loud"}, want: `--log-level: slog: level string "loud": unknown name`},
		"log-format":                    {args: []string{"--log-format", "xml"}, want: `--log-format "xml": must be json or text`},
		"port-check-grace":              {args: []string{"--port-check-grace", "0s"}, want: "--port-check-grace 0s: must be positive"},
		"verdict-requeue":               {args: []string{"--verdict-requeue", "-1s"}, want: "--verdict-requeue -1s: must be positive"},
		"port-recheck":                  {args: []string{"--port-recheck", "0s"}, want: "--port-recheck 0s: must be positive"},
		"dial-timeout":                  {args: []string{"--dial-timeout", "0s"}, want: "--dial-timeout 0s: must be positive"},
		"verdict-ttl":                   {args: []string{"--verdict-ttl", "0s"}, want: "--verdict-ttl 0s: must be positive"},
		"boot-grace":                    {env: map[string]string{"STACKDOME_BOOT_GRACE": "-5m"}, want: "--boot-grace -5m0s: must be positive"},
		"dial-workers":                  {args: []string{"--dial-workers", "0"}, want: "--dial-workers and --dial-queue must be at least 1"},
		"dial-queue":                    {args: []string{"--dial-queue", "0"}, want: "--dial-workers and --dial-queue must be at least 1"},
		"durations in order":            {args: []string{"--boot-grace", "0s", "--dial-timeout", "0s", "--port-check-grace", "0s"}, want: "--port-check-grace 0s: must be positive"},
		"first check first":             {args: []string{"--log-format", "xml", "--dial-allow", "x"}, want: `--dial-allow: parsing --dial-allow entry "x" (want a CIDR such as 10.0.0.0/8): netip.ParsePrefix("x"): no '/'`},
		"default requests":              {args: []string{"--insecure-plain-http", "--default-requests", "cpu=100m,memory=128Mi", "--default-limits", "memory=128Mi"}, want: "<nil>"},
		"default not a pair":            {args: []string{"--default-requests", "100m"}, want: `--default-requests: "100m": want name=quantity, e.g. cpu=100m`},
		"default not a size":            {args: []string{"--default-limits", "memory=lots"}, want: "--default-limits: memory: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
		"default zero":                  {args: []string{"--default-requests", "cpu=0"}, want: "--default-requests: cpu=0: must be positive"},
		"default twice":                 {args: []string{"--default-requests", "cpu=1,cpu=2"}, want: "--default-requests: cpu given twice"},
		"no stackdome pod labels":       {args: []string{"--network-policy-stackdome-pods", ""}, want: "--network-policy-stackdome-pods: at least one label is required: without one every pod of the namespace would be admitted as stackdome"},
		"traefik labels":                {args: []string{"--network-policy-traefik-pods", "app"}, want: `--network-policy-traefik-pods: "app": want key=value`},
		"traefik namespace":             {args: []string{"--network-policy-traefik-namespace", "Ingress"}, want: `--network-policy-traefik-namespace "Ingress": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		"request over limit":            {args: []string{"--default-requests", "memory=1Gi", "--default-limits", "memory=512Mi"}, want: "--default-requests memory=1Gi: more than --default-limits memory=512Mi; the API server would refuse every pod"},
		"read-timeout 0":                {args: []string{"--read-timeout", "0s"}, want: "--read-timeout 0s: must be positive"},
		"write-timeout 0":               {args: []string{"--write-timeout", "0s"}, want: "--write-timeout 0s: must be positive"},
		"read-header 0":                 {env: map[string]string{"STACKDOME_READ_HEADER_TIMEOUT": "0"}, want: "--read-header-timeout 0s: must be positive"},
		"idle-timeout 0":                {args: []string{"--idle-timeout", "0s"}, want: "--idle-timeout 0s: must be positive"},
		"verdict-max 0":                 {args: []string{"--verdict-max", "0"}, want: "--verdict-max 0: must be at least 1"},
		"max-conns 0":                   {args: []string{"--max-conns", "0"}, want: "--max-conns 0: must be at least 1"},
		"pages max-conns 0":             {env: map[string]string{"STACKDOME_ERROR_PAGES_MAX_CONNS": "0"}, want: "--error-pages-max-conns 0: must be at least 1"},
		"metrics max-conns 0":           {args: []string{"--metrics-max-conns", "-1"}, want: "--metrics-max-conns -1: must be at least 1"},
		"pages header bytes 0":          {args: []string{"--error-pages-max-header-bytes", "0"}, want: "--error-pages-max-header-bytes 0: must be at least 1"},
		"pages idle 0":                  {args: []string{"--error-pages-idle-timeout", "0s"}, want: "--error-pages-idle-timeout 0s: must be positive"},
		"pages header timeout 0":        {args: []string{"--error-pages-read-header-timeout", "0s"}, want: "--error-pages-read-header-timeout 0s: must be positive"},
		"nothing to serve":              {args: []string{"--hooks=false", "--pages=false"}, want: "--hooks=false and --pages=false: nothing to serve"},
		"max-body 0":                    {args: []string{"--max-body", "0"}, want: "--max-body 0: must be positive"},
		"hook-memory -1":                {args: []string{"--hook-memory", "-1"}, want: "--hook-memory -1: must not be negative"},
		"max-pods 0":                    {args: []string{"--max-pods", "0"}, want: "--max-pods 0: must be at least 1"},
		"listen and metrics":            {args: []string{"--listen", ":18080", "--metrics-listen", ":18080"}, want: `--listen ":18080" and --metrics-listen ":18080": both servers would listen on one port; give each its own`},
		"loopback and wildcard":         {args: []string{"--listen", "127.0.0.1:18080", "--metrics-listen", ":18080"}, want: `--listen "127.0.0.1:18080" and --metrics-listen ":18080": both servers would listen on one port; give each its own`},
		"wildcard and loopback":         {args: []string{"--error-pages-listen", "0.0.0.0:9000", "--metrics-listen", "[::1]:9000"}, want: `--error-pages-listen "0.0.0.0:9000" and --metrics-listen "[::1]:9000": both servers would listen on one port; give each its own`},
		"IPv6 wildcard":                 {args: []string{"--listen", "[::]:9000", "--metrics-listen", "127.0.0.1:9000"}, want: `--listen "[::]:9000" and --metrics-listen "127.0.0.1:9000": both servers would listen on one port; give each its own`},
		"pages on the hooks port":       {args: []string{"--error-pages-listen", ":8080"}, want: `--listen ":8080" and --error-pages-listen ":8080": both servers would listen on one port; give each its own`},
		"pprof on the pages port":       {args: []string{"--pprof-listen", "localhost:8082", "--error-pages-listen", "127.0.0.1:8082"}, want: `--error-pages-listen "127.0.0.1:8082" and --pprof-listen "localhost:8082": both servers would listen on one port; give each its own`},
		"pprof on metrics":              {args: []string{"--pprof-listen", ":8081"}, want: `--metrics-listen ":8081" and --pprof-listen ":8081": both servers would listen on one port; give each its own`},
		"IPv4-mapped":                   {args: []string{"--listen", "[::ffff:127.0.0.1]:9000", "--metrics-listen", "127.0.0.1:9000"}, want: `--listen "[::ffff:127.0.0.1]:9000" and --metrics-listen "127.0.0.1:9000": both servers would listen on one port; give each its own`},
		"one host name twice":           {args: []string{"--listen", "stackdome.local:9000", "--metrics-listen", "STACKDOME.local:9000"}, want: `--listen "stackdome.local:9000" and --metrics-listen "STACKDOME.local:9000": both servers would listen on one port; give each its own`},
		"from the environment":          {env: map[string]string{"STACKDOME_METRICS_LISTEN": ":8080"}, want: `--listen ":8080" and --metrics-listen ":8080": both servers would listen on one port; give each its own`},
		"pages off frees :8082":         {args: []string{"--insecure-plain-http", "--pages=false", "--metrics-listen", ":8082"}, want: "<nil>"},
		"pages off frees its own":       {args: []string{"--insecure-plain-http", "--pages=false", "--error-pages-listen", ":8080"}, want: "<nil>"},
		"port 0 twice":                  {args: []string{"--insecure-plain-http", "--listen", "127.0.0.1:0", "--error-pages-listen", "127.0.0.1:0", "--metrics-listen", ":0", "--pprof-listen", "127.0.0.1:0"}, want: "<nil>"},
		"two loopback addresses":        {args: []string{"--insecure-plain-http", "--listen", "127.0.0.1:9000", "--metrics-listen", "127.0.0.2:9000"}, want: "<nil>"},
		"two families":                  {args: []string{"--insecure-plain-http", "--listen", "[::1]:9000", "--metrics-listen", "127.0.0.1:9000"}, want: "<nil>"},
		"localhost, another loopback":   {args: []string{"--insecure-plain-http", "--listen", "localhost:9000", "--metrics-listen", "127.0.0.2:9000"}, want: "<nil>"},
		"two host names":                {args: []string{"--insecure-plain-http", "--listen", "a.local:9000", "--metrics-listen", "b.local:9000"}, want: "<nil>"},
		"unparsable: the bind names it": {args: []string{"--insecure-plain-http", "--listen", "nowhere", "--metrics-listen", "nowhere"}, want: "<nil>"},
		"no TLS":                        {want: "the hooks need --tls-cert-file, --tls-key-file and --tls-client-ca-file (mutual TLS with Metacontroller), or --insecure-plain-http to answer any caller in plain HTTP"},
		"TLS without key":               {args: []string{"--tls-cert-file", "tls.crt", "--tls-client-ca-file", "ca.crt"}, want: "--tls-cert-file without --tls-key-file: TLS needs the serving certificate, its key and the client CA"},
		"TLS without client CA":         {env: map[string]string{"STACKDOME_TLS_CERT_FILE": "tls.crt", "STACKDOME_TLS_KEY_FILE": "tls.key"}, want: "--tls-cert-file without --tls-client-ca-file: TLS needs the serving certificate, its key and the client CA"},
		"client CA alone":               {args: []string{"--tls-client-ca-file", "ca.crt"}, want: "--tls-client-ca-file without --tls-cert-file: TLS needs the serving certificate, its key and the client CA"},
		"TLS and plain":                 {args: []string{"--insecure-plain-http", "--tls-cert-file", "a", "--tls-key-file", "b", "--tls-client-ca-file", "c"}, want: "--insecure-plain-http with --tls-cert-file: choose TLS or plain HTTP"},
		"reload interval":               {args: []string{"--insecure-plain-http", "--tls-reload-interval", "0s"}, want: "--tls-reload-interval 0s: must be positive"},
		"pages alone need no TLS":       {args: []string{"--hooks=false"}, want: "<nil>"},
		"sync needs no TLS":             {cmd: "sync", want: "<nil>"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cmd := tc.cmd
			if cmd == "" {
				cmd = "serve"
			}
			_, err := parseFlags(cmd, tc.args, envOf(tc.env), io.Discard)
			got := "<nil>"
			if err != nil {
				got = err.Error()
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("error (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseAllow(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    []netip.Prefix
		wantErr string
	}{
		"empty allows all":    {in: "", want: nil},
		"blanks allow all":    {in: " , ", want: nil},
		"two families":        {in: "10.0.0.0/8,fd00::/8", want: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}},
		"masked and trimmed":  {in: " 10.1.2.3/16 ", want: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}},
		"bare IP is an error": {in: "10.0.0.1", wantErr: `parsing --dial-allow entry "10.0.0.1" (want a CIDR such as 10.0.0.0/8): netip.ParsePrefix("10.0.0.1"): no '/'`},
		"garbage is an error": {in: "10.0.0.0/8,pods", wantErr: `parsing --dial-allow entry "pods" (want a CIDR such as 10.0.0.0/8): netip.ParsePrefix("pods"): no '/'`},
		"bad length":          {in: "10.0.0.0/33", wantErr: `parsing --dial-allow entry "10.0.0.0/33" (want a CIDR such as 10.0.0.0/8): netip.ParsePrefix("10.0.0.0/33"): prefix length out of range`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseAllow(tc.in)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if d := cmp.Diff(tc.wantErr, gotErr); d != "" {
				t.Errorf("parseAllow(%q) error (-want +got):\n%s", tc.in, d)
			}
			if d := cmp.Diff(tc.want, got, configCmp); d != "" {
				t.Errorf("parseAllow(%q) (-want +got):\n%s", tc.in, d)
			}
		})
	}
}
