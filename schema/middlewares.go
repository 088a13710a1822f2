package schema

// MiddlewareRef names a Traefik Middleware of the resource's namespace.
type MiddlewareRef struct {
	// Name of the Middleware (metadata.name, a DNS subdomain).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// MiddlewareNames are the names of spec.middlewares, in order.
func (s Spec) MiddlewareNames() []string {
	out := make([]string, len(s.Middlewares))
	for i, m := range s.Middlewares {
		out[i] = m.Name
	}
	return out
}
