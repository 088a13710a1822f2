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
)

// The configuration of the binary, in one place: the config type, the
// flags that fill it (defineFlags), the STACKDOME_* variable of each flag
// (overlayEnv) and the checks that complete it (validate); parseFlags runs
// them in that order. serve's flags themselves are config_flags.go's, the
// syntax of the list-valued flags config_values.go's.

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
