package schema

// Defaults the API server applies at admission; Default applies the same ones
// so that a parent stored before a default existed reads the same.
const (
	DefaultReplicas int32 = 1
)

// Default returns a copy of s with every default filled in. It never changes s.
func Default(s Spec) Spec {
	if s.Replicas == nil {
		r := DefaultReplicas
		s.Replicas = &r
	}
	if s.ErrorPages == nil || s.ErrorPages.Enabled == nil {
		on := true
		s.ErrorPages = &ErrorPages{Enabled: &on}
	}
	return s
}

// ErrorPagesEnabled reports whether the branded pages are on, true by default.
func (s Spec) ErrorPagesEnabled() bool {
	return s.ErrorPages == nil || s.ErrorPages.Enabled == nil || *s.ErrorPages.Enabled
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
