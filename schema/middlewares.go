package schema

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// validateMiddlewares checks spec.middlewares the way the CRD does: DNS
// names, each once, and only with a public port.
func validateMiddlewares(s Spec) []string {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	seen := map[string]bool{}
	for i, m := range s.Middlewares {
		if m.Name == "" {
			add("spec.middlewares[%d].name is required", i)
		}
		for _, msg := range validation.IsDNS1123Subdomain(m.Name) {
			if m.Name != "" {
				add("spec.middlewares[%d].name %q: %s", i, m.Name, msg)
			}
		}
		if seen[m.Name] {
			add("spec.middlewares[%d].name %q: middlewares must be unique", i, m.Name)
		}
		seen[m.Name] = true
	}
	if len(s.Middlewares) > 0 && len(s.PublicPorts()) == 0 {
		add("spec.middlewares need a public port")
	}
	return errs
}

// ValidateChildNames checks that what the spec names in the resource's
// namespace does not collide with a child stackdome makes for the resource
// name: a team's Middleware named <name> and one of MiddlewareSuffixes
// would be stackdome's own. The CRD refuses the same at
// admission.
func ValidateChildNames(name string, s Spec) error {
	var errs []string
	for i, m := range s.Middlewares {
		for _, sfx := range middlewareSuffixes {
			if m.Name == name+sfx {
				errs = append(errs, fmt.Sprintf("spec.middlewares[%d].name %q is a Middleware stackdome makes and owns for %s", i, m.Name, name))
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("invalid spec: %s", strings.Join(errs, "; "))
}

// MiddlewareNames are the names of spec.middlewares, in order.
func (s Spec) MiddlewareNames() []string {
	out := make([]string, len(s.Middlewares))
	for i, m := range s.Middlewares {
		out[i] = m.Name
	}
	return out
}
