package hooks

import "time"

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
	// arrive; default 10s.
	VerdictRequeue time.Duration
	// BootGrace is how long a running pod may stay not ready before it is
	// reported failing; default 5m.
	BootGrace time.Duration
	// NoPodSecurityDefaults leaves the pods' security contexts as the spec
	// says; by default they meet Pod Security "restricted" unless the spec
	// relaxes a field.
	NoPodSecurityDefaults bool
	// DefaultCertResolver is the Traefik certificate resolver of a spec
	// whose tls names neither a Secret nor a resolver; empty: the entry
	// point's default certificate.
	DefaultCertResolver string
	// HTTPEntryPoint is the plain-HTTP entry point whose requests to a TLS
	// host are redirected to HTTPS; default web.
	HTTPEntryPoint string
}

// ErrorService names the chart's Service behind the branded error pages.
type ErrorService struct {
	Name      string
	Namespace string
	Port      int32
	// CrossNamespace points each errors Middleware at this Service in its
	// own namespace, as Traefik allows only with
	// providers.kubernetesCRD.allowCrossNamespace=true (off by default: a
	// Traefik with the default drops such a Middleware and disables every
	// route using it). When false, each resource gets a Service of its own
	// namespace whose EndpointSlice holds this Service's ClusterIP
	// (wiring.go), related through the customize hook.
	CrossNamespace bool
}

// DefaultConfig returns the configuration of a default install. Each call
// returns a new value: callers may change it freely.
func DefaultConfig() Config {
	return Config{
		EntryPoints:    []string{"websecure"},
		ErrorService:   ErrorService{Name: "stackdome-error-pages", Namespace: "stackdome", Port: 8082},
		PortCheckGrace: 3 * time.Minute,
		VerdictRequeue: 10 * time.Second,
		BootGrace:      5 * time.Minute,
		HTTPEntryPoint: "web",
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
	if c.HTTPEntryPoint == "" {
		c.HTTPEntryPoint = d.HTTPEntryPoint
	}
	return c
}
