package hooks

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/stackdome/stackdome/hooks/internal/children"
	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/hooks/internal/status"
)

// Config is what Sync needs besides the request: where children point and the
// timing of the port gate. A zero field takes its DefaultConfig value.
type Config struct {
	// EntryPoints of every IngressRoute; default [websecure].
	EntryPoints []string
	// ErrorService is the chart's error-page Service that each errors
	// Middleware points at.
	ErrorService ErrorService
	// NoErrorService says no error-page Service is installed: no errors
	// Middleware is made, and no route refers to one, whatever a spec asks
	// (Traefik disables a route whose middleware cannot be built).
	NoErrorService bool
	// PortCheckGrace is how long a closed verdict on a serving pod is
	// redialed before it is believed; default 3m.
	PortCheckGrace time.Duration
	// VerdictRequeue is the resyncAfterSeconds returned while a verdict can
	// arrive, and how long after the last pod turned ready a sync with no
	// verdict at all is held for its dial; default 10s.
	VerdictRequeue time.Duration
	// BootGrace is how long a running pod may stay not ready before it is
	// reported failing; default 5m.
	BootGrace time.Duration
	// ChildSettle is how long a child the answer returns may stay missing
	// from the sync requests before status says ChildNotCreated; default
	// 30s (Metacontroller creates children right after each answer, and
	// the next request shows them within a second or two).
	ChildSettle time.Duration
	// NoPodSecurityDefaults leaves the pods' security contexts as the spec
	// says; by default they meet Pod Security "restricted" unless the spec
	// relaxes a field.
	NoPodSecurityDefaults bool
	// DefaultCertResolver is the Traefik certificate resolver of a spec
	// whose tls names neither a Secret nor a resolver; empty: the entry
	// point's default certificate.
	DefaultCertResolver string
	// HTTPEntryPoint is the plain-HTTP entry point whose requests to a TLS
	// host are redirected to HTTPS, and on which an app without tls is
	// routed as it is; default web.
	HTTPEntryPoint string
	// DefaultResources are the requests and limits of an app whose spec
	// sets no resources; an app's own resources always win whole. Zero:
	// none (the pods run BestEffort).
	DefaultResources corev1.ResourceRequirements
	// NetworkPolicy says where the peers of a per-app NetworkPolicy live
	// and whether apps get one by default; the defaults are a default
	// chart install's (release stackdome in namespace stackdome, Traefik in
	// traefik), and the chart passes its own.
	NetworkPolicy NetworkPolicy
	// PodMonitors makes a Prometheus Operator PodMonitor of every spec
	// naming metrics. Only where the cluster serves the kind and the
	// CompositeController lists it (the chart's appDefaults.podMonitor):
	// Metacontroller refuses a child kind it cannot watch.
	PodMonitors bool
	// Unrelated are the kinds of config (ConfigMaps, Secrets) the customize
	// hook does not relate, the chart's relate.configMaps and
	// relate.secrets false: Metacontroller's related informers are
	// cluster-wide per kind, so relating one Secret makes it cache every
	// Secret of the cluster (docs/install.md). An unrelated kind's content
	// does not roll the pods and its existence is not checked; status says
	// so (Config NotWatched). Zero: both related.
	Unrelated Unrelated
}

// Unrelated says which kinds of config the install does not relate.
type Unrelated = observed.Unrelated

// NetworkPolicy is where the peers of a per-app NetworkPolicy live, as the
// platform configures them (flags the chart renders from its release and
// values), and whether an app whose spec does not say gets one.
type NetworkPolicy = children.NetworkPolicyConfig

// DefaultConfig returns the configuration of a default install. Each call
// returns a new value: callers may change it freely.
func DefaultConfig() Config {
	return Config{
		EntryPoints:    []string{"websecure"},
		ErrorService:   ErrorService{Name: "stackdome-error-pages", Namespace: "stackdome", Port: 8082},
		PortCheckGrace: 3 * time.Minute,
		VerdictRequeue: 10 * time.Second,
		BootGrace:      5 * time.Minute,
		ChildSettle:    30 * time.Second,
		HTTPEntryPoint: "web",
		NetworkPolicy: NetworkPolicy{
			StackdomeNamespace: "stackdome",
			StackdomePods:      map[string]string{"app.kubernetes.io/name": "stackdome", "app.kubernetes.io/instance": "stackdome", "app.kubernetes.io/component": "controller"},
			TraefikNamespace:   "traefik",
		},
	}
}

// withDefaults fills every zero field from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if len(c.EntryPoints) == 0 {
		c.EntryPoints = d.EntryPoints
	}
	if c.ErrorService.Name == "" {
		c.ErrorService.Name = d.ErrorService.Name
	}
	if c.ErrorService.Namespace == "" {
		c.ErrorService.Namespace = d.ErrorService.Namespace
	}
	if c.ErrorService.Port == 0 {
		c.ErrorService.Port = d.ErrorService.Port
	}
	if c.PortCheckGrace == 0 {
		c.PortCheckGrace = d.PortCheckGrace
	}
	if c.VerdictRequeue == 0 {
		c.VerdictRequeue = d.VerdictRequeue
	}
	if c.BootGrace == 0 {
		c.BootGrace = d.BootGrace
	}
	if c.ChildSettle == 0 {
		c.ChildSettle = d.ChildSettle
	}
	if c.HTTPEntryPoint == "" {
		c.HTTPEntryPoint = d.HTTPEntryPoint
	}
	if c.NetworkPolicy.StackdomeNamespace == "" {
		c.NetworkPolicy.StackdomeNamespace = d.NetworkPolicy.StackdomeNamespace
	}
	if len(c.NetworkPolicy.StackdomePods) == 0 {
		c.NetworkPolicy.StackdomePods = d.NetworkPolicy.StackdomePods
	}
	if c.NetworkPolicy.TraefikNamespace == "" {
		c.NetworkPolicy.TraefikNamespace = d.NetworkPolicy.TraefikNamespace
	}
	return c
}

// children is what package children reads of c (defaults filled).
func (c Config) children() children.Config {
	return children.Config{
		EntryPoints:           c.EntryPoints,
		ErrorService:          c.ErrorService,
		NoErrorService:        c.NoErrorService,
		NoPodSecurityDefaults: c.NoPodSecurityDefaults,
		DefaultCertResolver:   c.DefaultCertResolver,
		HTTPEntryPoint:        c.HTTPEntryPoint,
		DefaultResources:      c.DefaultResources,
		NetworkPolicy:         c.NetworkPolicy,
		PodMonitors:           c.PodMonitors,
	}
}

// status is what package status reads of c (defaults filled).
func (c Config) status() status.Config {
	return status.Config{
		PortCheckGrace: c.PortCheckGrace,
		VerdictRequeue: c.VerdictRequeue,
		BootGrace:      c.BootGrace,
		ChildSettle:    c.ChildSettle,
		ErrorService:   c.ErrorService,
		NoErrorService: c.NoErrorService,
	}
}
