package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/stackdome/stackdome/hooks"
	"github.com/stackdome/stackdome/portcheck"
)

// The configuration of the binary, in one place: the config type, the
// flags that fill it (defineFlags), the STACKDOME_* variable of each flag
// (overlayEnv) and the checks that complete it (validate); parseFlags runs
// them in that order. The syntax of the list-valued flags is
// config_values.go's.

// config is every setting of the binary.
type config struct {
	listen, errorPagesListen string
	metricsListen            string
	pprofListen              string // "": Go's profiles are not served
	brandsFile               string
	hooks                    hooks.Config
	portRecheck, dialTimeout time.Duration
	verdictTTL               time.Duration
	dialWorkers, dialQueue   int
	verdictMax               int
	dialAllow                []netip.Prefix
	dialAllowLoopback        bool // tests only: loopback inside dialAllow may be dialed
	logFormat                string
	logLevel                 slog.Level
	shutdownTimeout          time.Duration
	drainDelay               time.Duration
	maxBody                  int64
	maxPods                  int
	hookMemory               int64
	serveHooks, servePages   bool
	http                     httpLimits // --listen's (config_limits.go)
	pagesHTTP, metricsHTTP   httpLimits // --error-pages-listen's; --metrics-listen's and --pprof-listen's
	tls                      hookTLS    // tls.go
	syncFile                 string
	syncNow                  time.Time // sync and render: the clock of the answer
	renderFile               string
	renderNamespace          string // render: the namespace of an object that names none
}

// httpLimits bound what one client can hold of a server, and maxConns
// what all of them hold together.
type httpLimits struct {
	readHeaderTimeout, readTimeout, writeTimeout, idleTimeout time.Duration
	maxHeaderBytes, maxConns                                  int
}

// rawFlags are the flags kept as typed on the command line, which validate
// turns into config fields.
type rawFlags struct {
	entryPoints, dialAllow, logLevel, now string
	defaultRequests, defaultLimits        string
	stackdomePods, traefikPods            string
	errorServicePort                      int
	podSecurityDefaults                   bool
	relateSecrets, relateConfigMaps       bool
}

// parseFlags reads flags, then STACKDOME_* variables for the flags not given,
// then checks the result. --help prints cmd's help to helpOut and returns
// errHelp; a command line or variable that cannot run returns a usageError
// naming the flag.
func parseFlags(cmd string, args []string, lookupEnv func(string) (string, bool), helpOut io.Writer) (config, error) {
	var c config
	var raw rawFlags
	fs := defineFlags(cmd, &c, &raw, helpOut)
	if err := parseArgs(fs, args, 0); err != nil {
		return c, err
	}
	if err := overlayEnv(fs, lookupEnv); err != nil {
		return c, usageError{err}
	}
	if err := validate(&c, raw); err != nil {
		return c, usageError{err}
	}
	return c, nil
}

// defineFlags makes the flag set of cmd ("serve", "sync" or "render"),
// whose help goes to out: each flag writes into c, or into raw when
// validate must parse or check it, and starts at its default. It parses
// nothing.
func defineFlags(cmd string, c *config, raw *rawFlags, out io.Writer) *flag.FlagSet {
	// The one place that reads the hooks package's defaults.
	defaults := hooks.DefaultConfig()
	c.hooks = defaults
	fs := newFlagSet(cmd, "", out)
	defineServerFlags(fs, c, raw)
	defineHookFlags(fs, c, raw, defaults)
	defineVerifierFlags(fs, c, raw)
	// sync takes them too (and ignores them): it parses every flag serve does.
	defineTLSFlags(fs, &c.tls, cmd == "serve")
	if cmd == "sync" {
		fs.StringVar(&c.syncFile, "f", "-", "the sync request to answer; - is stdin")
		fs.StringVar(&raw.now, "now", "", "answer as of this RFC 3339 time instead of the current time")
	}
	if cmd == "render" {
		fs.StringVar(&c.renderFile, "f", "-", "StackResources to render, YAML or JSON, with the ConfigMaps, Secrets and Middlewares they use and the chart's error-page Service if they exist; - is stdin")
		fs.StringVar(&c.renderNamespace, "namespace", "default", "namespace of an object that names none, as kubectl's")
		fs.StringVar(&raw.now, "now", "", "render as of this RFC 3339 time instead of the current time")
	}
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprintf(fs.Output(), "\nEvery flag is also read from STACKDOME_<FLAG>, dashes as underscores\n(e.g. STACKDOME_PORT_CHECK_GRACE); a flag on the command line wins.\n")
	}
	return fs
}

// defineServerFlags: the listeners, their HTTP limits, the lifetime and logs.
func defineServerFlags(fs *flag.FlagSet, c *config, raw *rawFlags) {
	fs.StringVar(&c.listen, "listen", ":8080", "address of the hooks, /healthz and /readyz")
	fs.StringVar(&c.errorPagesListen, "error-pages-listen", ":8082", "address of the error pages (pages only)")
	fs.StringVar(&c.brandsFile, "brands-file", "", "JSON file of the error pages' brands (the chart's errorPages.brands); empty: stackdome's own brand")
	fs.StringVar(&c.metricsListen, "metrics-listen", ":8081", "address of GET /metrics (metrics only)")
	fs.StringVar(&c.pprofListen, "pprof-listen", "", "address of Go's profiles (net/http/pprof, /debug/pprof/), e.g. 127.0.0.1:6060 reached by kubectl port-forward; empty: not served. They show the process's internals: never bind it where others reach it")
	fs.BoolVar(&c.serveHooks, "hooks", true, "serve the hooks on --listen and run the port verifier; false: --listen serves /healthz and /readyz only (the chart's error-page Deployment)")
	fs.BoolVar(&c.servePages, "pages", true, "serve the error pages on --error-pages-listen; false: nothing is bound there (the chart's hook Deployment, whose pages another Deployment serves)")
	fs.StringVar(&c.logFormat, "log-format", "json", "log format: json or text")
	fs.StringVar(&raw.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 25*time.Second, "how long in-flight requests may take to finish on shutdown")
	fs.DurationVar(&c.drainDelay, "drain-delay", 5*time.Second, "how long /readyz answers 503 before the servers stop accepting")
	fs.Int64Var(&c.maxBody, "max-body", hooks.MaxBody, "largest hook request body in bytes")
	fs.Int64Var(&c.hookMemory, "hook-memory", 0, "bytes the hook requests being served may hold at once, shared fairly between their parents' namespaces; past it 429 with Retry-After (0: half of GOMEMLIMIT, 128 MiB without one)")
	fs.IntVar(&c.maxPods, "max-pods", hooks.DefaultBudget.PodsPerSync, "related pods of one sync request; more is answered 413")
	// Metacontroller gives up on a hook after its timeout (the chart's
	// hookTimeout, 5s; 10s by default): a request still being read then
	// has no reader of its answer. The write deadline runs from the end
	// of the headers, so it also covers the sync itself.
	fs.DurationVar(&c.http.readHeaderTimeout, "read-header-timeout", 5*time.Second, "time to read a request's headers")
	fs.DurationVar(&c.http.readTimeout, "read-timeout", 5*time.Second, "time to read a whole request")
	fs.DurationVar(&c.http.writeTimeout, "write-timeout", 10*time.Second, "time from a request's headers to the end of its response")
	fs.DurationVar(&c.http.idleTimeout, "idle-timeout", 120*time.Second, "how long an idle keep-alive connection is kept")
	// Metacontroller's hook calls, the kubelet's probes and a scrape send
	// a few hundred bytes of headers (a bearer token at most adds 2 KiB).
	fs.IntVar(&c.http.maxHeaderBytes, "max-header-bytes", 16<<10, "largest request header block in bytes of the hooks, metrics and pprof ports")
	defineLimitFlags(fs, c)
}

// defineHookFlags: what Sync builds (routes, error pages) and the timing of
// its port gate; the defaults are hooks.DefaultConfig's.
func defineHookFlags(fs *flag.FlagSet, c *config, raw *rawFlags, defaults hooks.Config) {
	fs.DurationVar(&c.hooks.PortCheckGrace, "port-check-grace", defaults.PortCheckGrace, "how long a refused port of a serving app is redialed before it is believed")
	fs.DurationVar(&c.hooks.VerdictRequeue, "verdict-requeue", defaults.VerdictRequeue, "resyncAfterSeconds while a port verdict can arrive")
	fs.DurationVar(&c.hooks.BootGrace, "boot-grace", defaults.BootGrace, "how long a running pod may stay not ready before it is reported failing")
	fs.StringVar(&raw.entryPoints, "entry-points", strings.Join(defaults.EntryPoints, ","), "Traefik entry points of every IngressRoute, comma separated")
	fs.StringVar(&c.hooks.ErrorService.Name, "error-service-name", defaults.ErrorService.Name, "the error-page Service each errors Middleware points at; empty: none is installed, so no errors Middleware is made")
	fs.StringVar(&c.hooks.ErrorService.Namespace, "error-service-namespace", defaults.ErrorService.Namespace, "namespace of the error-page Service")
	fs.BoolVar(&c.hooks.ErrorService.CrossNamespace, "error-service-cross-namespace", false, "point each errors Middleware straight at the error-page Service in its own namespace (needs Traefik's allowCrossNamespace=true); default: a Service and EndpointSlice in each app's namespace holding the error-page Service's ClusterIP")
	fs.IntVar(&raw.errorServicePort, "error-service-port", int(defaults.ErrorService.Port), "port of the error-page Service")
	fs.BoolVar(&raw.podSecurityDefaults, "pod-security-defaults", !defaults.NoPodSecurityDefaults, "give every pod the Pod Security restricted security context (runAsNonRoot, RuntimeDefault seccomp, no privilege escalation, all capabilities dropped) wherever its spec sets no field of its own")
	fs.StringVar(&c.hooks.DefaultCertResolver, "tls-cert-resolver", defaults.DefaultCertResolver, "Traefik certificate resolver of a StackResource whose tls names neither a Secret nor a resolver; empty: the entry point's default certificate")
	fs.StringVar(&raw.defaultRequests, "default-requests", "", "requests of an app whose spec sets no resources, e.g. cpu=100m,memory=128Mi (empty: none)")
	fs.StringVar(&raw.defaultLimits, "default-limits", "", "limits of an app whose spec sets no resources, e.g. memory=256Mi (empty: none)")
	fs.BoolVar(&c.hooks.NetworkPolicy.Default, "network-policy-default", false, "give every app whose spec.networkPolicy.enabled is unset a NetworkPolicy")
	fs.StringVar(&c.hooks.NetworkPolicy.StackdomeNamespace, "network-policy-stackdome-namespace", defaults.NetworkPolicy.StackdomeNamespace, "namespace of stackdome's pods, which an app's NetworkPolicy admits to every declared port (the port gate)")
	fs.StringVar(&raw.stackdomePods, "network-policy-stackdome-pods", labelString(defaults.NetworkPolicy.StackdomePods), "labels of stackdome's pods (k=v, comma separated)")
	fs.StringVar(&c.hooks.NetworkPolicy.TraefikNamespace, "network-policy-traefik-namespace", defaults.NetworkPolicy.TraefikNamespace, "Traefik's namespace, which an app's NetworkPolicy admits to its public ports")
	fs.StringVar(&raw.traefikPods, "network-policy-traefik-pods", "", "labels of Traefik's pods (k=v, comma separated); empty: any pod of Traefik's namespace")
	fs.BoolVar(&raw.relateSecrets, "relate-secrets", true, "relate the Secrets a spec uses (customize hook), so that a change of their content rolls the pods and a missing one is named in status; Metacontroller then caches every Secret of the cluster (docs/install.md, Metacontroller's memory)")
	fs.BoolVar(&raw.relateConfigMaps, "relate-configmaps", true, "relate the ConfigMaps a spec uses, likewise; Metacontroller then caches every ConfigMap of the cluster")
	fs.BoolVar(&c.hooks.PodMonitors, "pod-monitors", false, "make a Prometheus Operator PodMonitor of every spec naming metrics (the CompositeController must list podmonitors)")
	fs.StringVar(&c.hooks.HTTPEntryPoint, "http-entry-point", defaults.HTTPEntryPoint, "plain-HTTP Traefik entry point on which requests to a TLS route's host are redirected to HTTPS, and an app without tls is routed as it is")
}

// defineVerifierFlags: the port verifier's pool, timing and allow list;
// the defaults are portcheck.DefaultConfig's.
func defineVerifierFlags(fs *flag.FlagSet, c *config, raw *rawFlags) {
	d := portcheck.DefaultConfig()
	fs.DurationVar(&c.portRecheck, "port-recheck", d.Recheck, "age at which a verdict is redialed while it still counts")
	fs.DurationVar(&c.dialTimeout, "dial-timeout", d.DialTimeout, "timeout of one port dial")
	fs.IntVar(&c.dialWorkers, "dial-workers", d.Workers, "dials in flight at most")
	fs.IntVar(&c.dialQueue, "dial-queue", d.QueueSize, "dial jobs waiting at most")
	fs.StringVar(&raw.dialAllow, "dial-allow", "", "CIDRs of pod IPs that may be dialed, comma separated: the cluster's pod CIDRs. Empty: nothing is dialed (every port reads Unknown). Loopback, link-local, cloud metadata and unspecified addresses are never dialed, whatever this says")
	fs.BoolVar(&c.dialAllowLoopback, "dial-allow-loopback", false, "FOR TESTS ONLY: let loopback addresses inside --dial-allow be dialed (test pods on 127.0.0.x). Never set it in a cluster: a pod IP is never loopback, and a loopback dial reaches the node's own services")
	fs.DurationVar(&c.verdictTTL, "verdict-ttl", d.TTL, "a verdict not read for this long is forgotten")
	fs.IntVar(&c.verdictMax, "verdict-max", d.MaxEntries, "verdicts kept at most, one per StackResource (~410 B each); past it the least recently read are forgotten, and those apps are dialed again as by a fresh replica")
}

// envName is the environment variable of a flag: STACKDOME_ and its name in
// upper case, dashes as underscores (--port-check-grace:
// STACKDOME_PORT_CHECK_GRACE).
func envName(flagName string) string {
	return "STACKDOME_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// overlayEnv sets every flag of fs that the command line did not give from
// its environment variable, if lookupEnv finds one: a flag on the command
// line wins over the environment, the environment over the default. Flags
// are visited in name order; the first value a flag refuses is returned as
// an error naming the variable and its value, and nothing after it is set.
func overlayEnv(fs *flag.FlagSet, lookupEnv func(string) (string, bool)) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if err != nil || given[f.Name] {
			return
		}
		env := envName(f.Name)
		if v, ok := lookupEnv(env); ok {
			if serr := fs.Set(f.Name, v); serr != nil {
				err = fmt.Errorf("%s=%q: %w", env, v, serr)
			}
		}
	})
	return err
}

// validate completes c from the flags kept raw and checks every setting,
// in a fixed order; the first setting that cannot run is returned as an
// error naming its flag and what it must be. On error c is partly filled
// and must not be used.
func validate(c *config, raw rawFlags) error {
	var err error
	if raw.now != "" {
		if c.syncNow, err = time.Parse(time.RFC3339, raw.now); err != nil {
			return fmt.Errorf("--now: %w", err)
		}
	}
	if c.dialAllow, err = parseAllow(raw.dialAllow); err != nil {
		return fmt.Errorf("--dial-allow: %w", err)
	}
	c.hooks.EntryPoints = splitList(raw.entryPoints)
	if len(c.hooks.EntryPoints) == 0 {
		return errors.New("--entry-points: at least one entry point is required")
	}
	if raw.errorServicePort < 1 || raw.errorServicePort > 65535 {
		return fmt.Errorf("--error-service-port %d: must be between 1 and 65535", raw.errorServicePort)
	}
	c.hooks.ErrorService.Port = int32(raw.errorServicePort)
	c.hooks.NoPodSecurityDefaults = !raw.podSecurityDefaults
	c.hooks.Unrelated.Secrets, c.hooks.Unrelated.ConfigMaps = !raw.relateSecrets, !raw.relateConfigMaps
	if strings.TrimSpace(c.hooks.HTTPEntryPoint) == "" {
		return errors.New("--http-entry-point: an entry point is required")
	}
	// An empty name: the chart installs no error-page Service
	// (errorPages.enabled=false).
	c.hooks.NoErrorService = c.hooks.ErrorService.Name == ""
	if err := c.logLevel.UnmarshalText([]byte(raw.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	if c.logFormat != "json" && c.logFormat != "text" {
		return fmt.Errorf("--log-format %q: must be json or text", c.logFormat)
	}
	for _, d := range []struct {
		flag  string
		value time.Duration
	}{
		{"port-check-grace", c.hooks.PortCheckGrace},
		{"verdict-requeue", c.hooks.VerdictRequeue},
		{"port-recheck", c.portRecheck},
		{"dial-timeout", c.dialTimeout},
		{"verdict-ttl", c.verdictTTL},
		{"boot-grace", c.hooks.BootGrace},
		// 0 would disable net/http's timeout: a client could then hold a
		// connection, and what it declared, for ever.
		{"read-header-timeout", c.http.readHeaderTimeout},
		{"read-timeout", c.http.readTimeout},
		{"write-timeout", c.http.writeTimeout},
		{"idle-timeout", c.http.idleTimeout},
	} {
		if d.value <= 0 {
			return fmt.Errorf("--%s %s: must be positive", d.flag, d.value)
		}
	}
	if err := validateLimits(c); err != nil {
		return err
	}
	if !c.serveHooks && !c.servePages {
		return errors.New("--hooks=false and --pages=false: nothing to serve")
	}
	if err := checkListeners(c); err != nil {
		return err
	}
	if c.maxBody < 1 {
		return fmt.Errorf("--max-body %d: must be positive", c.maxBody)
	}
	if c.hookMemory < 0 {
		return fmt.Errorf("--hook-memory %d: must not be negative", c.hookMemory)
	}
	if c.maxPods < 1 {
		return fmt.Errorf("--max-pods %d: must be at least 1", c.maxPods)
	}
	if c.dialWorkers < 1 || c.dialQueue < 1 {
		return errors.New("--dial-workers and --dial-queue must be at least 1")
	}
	if c.verdictMax < 1 {
		return fmt.Errorf("--verdict-max %d: must be at least 1", c.verdictMax)
	}
	if c.hooks.DefaultResources.Requests, err = parseResources(raw.defaultRequests); err != nil {
		return fmt.Errorf("--default-requests: %w", err)
	}
	if c.hooks.DefaultResources.Limits, err = parseResources(raw.defaultLimits); err != nil {
		return fmt.Errorf("--default-limits: %w", err)
	}
	if c.hooks.NetworkPolicy.StackdomePods, err = parseLabels(raw.stackdomePods); err != nil {
		return fmt.Errorf("--network-policy-stackdome-pods: %w", err)
	}
	if len(c.hooks.NetworkPolicy.StackdomePods) == 0 {
		return errors.New("--network-policy-stackdome-pods: at least one label is required: without one every pod of the namespace would be admitted as stackdome")
	}
	if c.hooks.NetworkPolicy.TraefikPods, err = parseLabels(raw.traefikPods); err != nil {
		return fmt.Errorf("--network-policy-traefik-pods: %w", err)
	}
	for flag, ns := range map[string]string{"--network-policy-stackdome-namespace": c.hooks.NetworkPolicy.StackdomeNamespace, "--network-policy-traefik-namespace": c.hooks.NetworkPolicy.TraefikNamespace} {
		if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
			return fmt.Errorf("%s %q: %s", flag, ns, strings.Join(msgs, "; "))
		}
	}
	for name, req := range c.hooks.DefaultResources.Requests {
		if lim, ok := c.hooks.DefaultResources.Limits[name]; ok && req.Cmp(lim) > 0 {
			return fmt.Errorf("--default-requests %s=%s: more than --default-limits %s=%s; the API server would refuse every pod", name, req.String(), name, lim.String())
		}
	}
	// Last: a command line with another mistake is told about that first.
	return c.tls.validate(c.serveHooks)
}
