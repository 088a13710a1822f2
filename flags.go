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

	"github.com/stackdome/stackdome/hooks"
	"github.com/stackdome/stackdome/portcheck"
)

// config is every setting of the binary.
type config struct {
	listen, errorPagesListen string
	hooks                    hooks.Config
	portRecheck, dialTimeout time.Duration
	verdictTTL               time.Duration
	dialWorkers, dialQueue   int
	dialAllow                []netip.Prefix
	logFormat                string
	logLevel                 slog.Level
	shutdownTimeout          time.Duration
	drainDelay               time.Duration
	maxBody                  int64
	http                     httpLimits
	syncFile                 string
	syncNow                  time.Time
}

// httpLimits bound what one client can hold of a server.
type httpLimits struct {
	readHeaderTimeout, readTimeout, writeTimeout, idleTimeout time.Duration
	maxHeaderBytes                                            int
}

// parseFlags reads flags, then STACKDOME_* variables for the flags not given.
func parseFlags(cmd string, args []string, lookupEnv func(string) (string, bool), stderr io.Writer) (config, error) {
	c := config{hooks: hooks.DefaultConfig()}
	fs := flag.NewFlagSet("stackdome "+cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var entryPoints, dialAllow, logLevel string
	var errPort int
	fs.StringVar(&c.listen, "listen", ":8080", "address of the hooks, /healthz, /readyz and /metrics")
	fs.StringVar(&c.errorPagesListen, "error-pages-listen", ":8082", "address of the error pages (pages only)")
	fs.DurationVar(&c.hooks.PortCheckGrace, "port-check-grace", hooks.DefaultConfig().PortCheckGrace, "how long a refused port of a serving app is redialed before it is believed")
	fs.DurationVar(&c.hooks.VerdictRequeue, "verdict-requeue", hooks.DefaultConfig().VerdictRequeue, "resyncAfterSeconds while a port verdict can arrive")
	fs.DurationVar(&c.hooks.BootGrace, "boot-grace", hooks.DefaultConfig().BootGrace, "how long a running pod may stay not ready before it is reported failing")
	fs.DurationVar(&c.portRecheck, "port-recheck", 5*time.Minute, "age at which a verdict is redialed while it still counts")
	fs.DurationVar(&c.dialTimeout, "dial-timeout", 2*time.Second, "timeout of one port dial")
	fs.IntVar(&c.dialWorkers, "dial-workers", 32, "dials in flight at most")
	fs.IntVar(&c.dialQueue, "dial-queue", 1024, "dial jobs waiting at most")
	fs.StringVar(&dialAllow, "dial-allow", "", "CIDRs of pod IPs that may be dialed, comma separated (empty: all)")
	fs.DurationVar(&c.verdictTTL, "verdict-ttl", time.Hour, "a verdict not read for this long is forgotten")
	fs.StringVar(&entryPoints, "entry-points", strings.Join(hooks.DefaultConfig().EntryPoints, ","), "Traefik entry points of every IngressRoute, comma separated")
	fs.StringVar(&c.hooks.ErrorService.Name, "error-service-name", hooks.DefaultConfig().ErrorService.Name, "the error-page Service each errors Middleware points at; empty: none is installed, so no errors Middleware is made")
	fs.StringVar(&c.hooks.ErrorService.Namespace, "error-service-namespace", hooks.DefaultConfig().ErrorService.Namespace, "namespace of the error-page Service")
	fs.BoolVar(&c.hooks.ErrorService.CrossNamespace, "error-service-cross-namespace", false, "point each errors Middleware at the error-page Service in its own namespace (needs Traefik's allowCrossNamespace=true); default: a Service and EndpointSlice in each app's namespace holding its ClusterIP")
	fs.IntVar(&errPort, "error-service-port", int(hooks.DefaultConfig().ErrorService.Port), "port of the error-page Service")
	fs.StringVar(&c.logFormat, "log-format", "json", "log format: json or text")
	fs.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 25*time.Second, "how long in-flight requests may take to finish on shutdown")
	fs.DurationVar(&c.drainDelay, "drain-delay", 5*time.Second, "how long /readyz answers 503 before the servers stop accepting")
	fs.Int64Var(&c.maxBody, "max-body", hooks.MaxBody, "largest hook request body in bytes")
	fs.DurationVar(&c.http.readHeaderTimeout, "read-header-timeout", 5*time.Second, "time to read a request's headers")
	fs.DurationVar(&c.http.readTimeout, "read-timeout", 30*time.Second, "time to read a whole request")
	fs.DurationVar(&c.http.writeTimeout, "write-timeout", 30*time.Second, "time to write a response")
	fs.DurationVar(&c.http.idleTimeout, "idle-timeout", 120*time.Second, "how long an idle keep-alive connection is kept")
	fs.IntVar(&c.http.maxHeaderBytes, "max-header-bytes", 64<<10, "largest request header block in bytes")
	var now string
	if cmd == "sync" {
		fs.StringVar(&c.syncFile, "f", "-", "the sync request to answer; - is stdin")
		fs.StringVar(&now, "now", "", "answer as of this RFC 3339 time instead of the current time")
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: stackdome [serve] [flags] | stackdome sync [-f request.json] [flags]\n\nEvery flag is also read from STACKDOME_<FLAG> (e.g. STACKDOME_PORT_CHECK_GRACE).\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, errHelp
		}
		return c, errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "stackdome %s: unexpected argument %q\n", cmd, fs.Arg(0))
		return c, errUsage
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		env := "STACKDOME_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := lookupEnv(env); ok && !given[f.Name] && envErr == nil {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("%s=%q: %w", env, v, err)
			}
		}
	})
	if envErr != nil {
		return c, envErr
	}
	var err error
	if now != "" {
		if c.syncNow, err = time.Parse(time.RFC3339, now); err != nil {
			return c, fmt.Errorf("--now: %w", err)
		}
	}
	if c.dialAllow, err = portcheck.ParseAllow(dialAllow); err != nil {
		return c, fmt.Errorf("--dial-allow: %w", err)
	}
	c.hooks.EntryPoints = nil
	for _, e := range strings.Split(entryPoints, ",") {
		if e = strings.TrimSpace(e); e != "" {
			c.hooks.EntryPoints = append(c.hooks.EntryPoints, e)
		}
	}
	if len(c.hooks.EntryPoints) == 0 {
		return c, errors.New("--entry-points: at least one entry point is required")
	}
	if errPort < 1 || errPort > 65535 {
		return c, fmt.Errorf("--error-service-port %d: must be between 1 and 65535", errPort)
	}
	c.hooks.ErrorService.Port = int32(errPort)
	if c.hooks.ErrorService.Name == "" {
		// The chart installs no error-page Service (errorPages.enabled=false).
		c.hooks.NoErrorService = true
	}
	if err := c.logLevel.UnmarshalText([]byte(logLevel)); err != nil {
		return c, fmt.Errorf("--log-level: %w", err)
	}
	if c.logFormat != "json" && c.logFormat != "text" {
		return c, fmt.Errorf("--log-format %q: must be json or text", c.logFormat)
	}
	for name, d := range map[string]time.Duration{"port-check-grace": c.hooks.PortCheckGrace, "verdict-requeue": c.hooks.VerdictRequeue,
		"port-recheck": c.portRecheck, "dial-timeout": c.dialTimeout, "verdict-ttl": c.verdictTTL, "boot-grace": c.hooks.BootGrace} {
		if d <= 0 {
			return c, fmt.Errorf("--%s %s: must be positive", name, d)
		}
	}
	if c.dialWorkers < 1 || c.dialQueue < 1 {
		return c, errors.New("--dial-workers and --dial-queue must be at least 1")
	}
	return c, nil
}
