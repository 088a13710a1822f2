package main

import (
	"flag"
	"strings"
	"time"

	"github.com/stackdome/stackdome/hooks"
	"github.com/stackdome/stackdome/portcheck"
)

// The flags of serve, each defined once with its name, default and help:
// the help is the one description of the setting, which stackdome serve
// --help prints and docs/flags.md is generated from (TestFlagsDoc).

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
	fs.DurationVar(&c.hooks.VerdictRequeue, "verdict-requeue", defaults.VerdictRequeue, "resyncAfterSeconds while a port verdict can arrive; how long after pods turn ready a sync without a verdict is held for its dial")
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
