package schema

import "strings"

// Defaults the API server applies at admission; Default applies the same ones
// so that a parent stored before a default existed reads the same.
const (
	DefaultReplicas int32 = 1
)

// Default returns a copy of s with every default filled in. It never changes s.
// Replicas stays nil under Autoscaling: the autoscaler owns the count.
func Default(s Spec) Spec {
	if s.Replicas == nil && s.Autoscaling == nil {
		r := DefaultReplicas
		s.Replicas = &r
	}
	if a := s.Autoscaling; a != nil {
		c := *a
		if c.MinReplicas == nil {
			m := DefaultMinReplicas
			c.MinReplicas = &m
		}
		if c.TargetCPUUtilizationPercentage == nil {
			t := DefaultTargetCPU
			c.TargetCPUUtilizationPercentage = &t
		}
		s.Autoscaling = &c
	}
	if s.ErrorPages == nil || s.ErrorPages.Enabled == nil {
		// A copy: the caller's spec is not written, and a brand set without
		// enabled keeps its brand.
		var e ErrorPages
		if s.ErrorPages != nil {
			e = *s.ErrorPages
		}
		on := true
		e.Enabled = &on
		s.ErrorPages = &e
	}
	return s
}

// ErrorPagesEnabled reports whether the branded pages are on, true by default.
func (s Spec) ErrorPagesEnabled() bool {
	return s.ErrorPages == nil || s.ErrorPages.Enabled == nil || *s.ErrorPages.Enabled
}

// ErrorPagesBrand is the brand the spec's pages are drawn in, "" for the
// platform's default.
func (s Spec) ErrorPagesBrand() string {
	if s.ErrorPages == nil {
		return ""
	}
	return s.ErrorPages.Brand
}

// PrimaryPort returns the port the synthesized readiness probe targets: the
// first public port, else the first port. ok is false without ports.
func (s Spec) PrimaryPort() (p Port, ok bool) {
	for _, p := range s.Ports {
		if p.Public {
			return p, true
		}
	}
	if len(s.Ports) == 0 {
		return Port{}, false
	}
	return s.Ports[0], true
}

// RoutePath is the path prefix a public port is routed at, and whether the
// prefix is stripped before the request reaches the app: its own Path as it
// is; none for the primary port; /<name>, stripped, for any other.
func (s Spec) RoutePath(p Port) (path string, strip bool) {
	if p.Path != "" {
		return p.Path, false
	}
	if primary, ok := s.PrimaryPort(); ok && primary.Name == p.Name {
		return "", false
	}
	return "/" + p.Name, true
}

// PublicPorts returns the public ports in declaration order.
func (s Spec) PublicPorts() []Port {
	var out []Port
	for _, p := range s.Ports {
		if p.Public {
			out = append(out, p)
		}
	}
	return out
}

// RouteHosts returns the hosts the public routes answer for: Host first
// when set, then Hosts, in order.
func (s Spec) RouteHosts() []string {
	var out []string
	if s.Host != "" {
		out = append(out, s.Host)
	}
	return append(out, s.Hosts...)
}

// HostMatch is the Traefik rule matching every route host: Host(`a`) for
// one, (Host(`a`) || Host(`b`)) for more, so that a PathPrefix can follow
// with &&.
func (s Spec) HostMatch() string {
	hosts := s.RouteHosts()
	var b strings.Builder
	for i, h := range hosts {
		if i > 0 {
			b.WriteString(" || ")
		}
		b.WriteString("Host(`" + h + "`)")
	}
	if len(hosts) > 1 {
		return "(" + b.String() + ")"
	}
	return b.String()
}
