package schema

import (
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validatePorts checks spec.ports: IANA service names, numbers in range,
// each name and number once.
func validatePorts(ports []Port, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names, numbers := map[string]bool{}, map[int32]bool{}
	for i, p := range ports {
		pp := path.Index(i)
		for _, msg := range validation.IsValidPortName(p.Name) {
			errs = append(errs, field.Invalid(pp.Child("name"), p.Name, msg))
		}
		if p.Port < MinPortNumber || p.Port > MaxPortNumber {
			errs = append(errs, field.Invalid(pp.Child("port"), p.Port, validation.InclusiveRangeError(MinPortNumber, MaxPortNumber)))
		}
		if names[p.Name] {
			errs = append(errs, field.Duplicate(pp.Child("name"), p.Name))
		}
		if numbers[p.Port] {
			errs = append(errs, field.Duplicate(pp.Child("port"), p.Port))
		}
		names[p.Name], numbers[p.Port] = true, true
	}
	return errs
}

// validateHosts checks spec.host and spec.hosts: DNS names, each once,
// host not repeated in hosts, and one at least for a public port.
func validateHosts(s Spec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.PublicPorts()) > 0 && len(s.RouteHosts()) == 0 {
		errs = append(errs, field.Required(path.Child("host"), "host is required when a port is public, or hosts"))
	}
	if s.Host != "" {
		for _, msg := range validation.IsDNS1123Subdomain(s.Host) {
			errs = append(errs, field.Invalid(path.Child("host"), s.Host, msg))
		}
	}
	seen := map[string]bool{}
	for i, h := range s.Hosts {
		hp := path.Child("hosts").Index(i)
		for _, msg := range validation.IsDNS1123Subdomain(h) {
			errs = append(errs, field.Invalid(hp, h, msg))
		}
		switch {
		case h == s.Host:
			errs = append(errs, field.Invalid(hp, h, "hosts must not repeat host: host is the first host already"))
		case seen[h]:
			errs = append(errs, field.Duplicate(hp, h))
		}
		seen[h] = true
	}
	return errs
}

// RoutePathPattern is the CRD's pattern of spec.ports[*].path and
// spec.metrics.path: a path Traefik's PathPrefix rule and a Prometheus
// scrape take as they are, with nothing to quote.
const RoutePathPattern = `^/[-a-zA-Z0-9._~/%]*$`

var routePath = regexp.MustCompile(RoutePathPattern)

// validateRouting checks the paths public ports are routed at and TLS.
func validateRouting(s Spec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths := map[string]string{}
	for i, p := range s.Ports {
		pp := path.Child("ports").Index(i)
		if p.Path != "" {
			if !p.Public {
				errs = append(errs, field.Forbidden(pp.Child("path"), "only a public port is routed at a path"))
			}
			if !routePath.MatchString(p.Path) {
				errs = append(errs, field.Invalid(pp.Child("path"), p.Path, validation.RegexError("must start with / and hold only letters, digits and -._~/%", RoutePathPattern, "/api")))
			}
		}
		if !p.Public {
			continue
		}
		route, _ := s.RoutePath(p)
		if other, ok := paths[route]; ok {
			errs = append(errs, field.Invalid(pp, p.Name, "is routed at "+strconv.Quote(route)+" like "+other+": public ports need distinct paths"))
		}
		paths[route] = p.Name
	}
	if t := s.TLS; t != nil {
		tp := path.Child("tls")
		if t.SecretName != "" && t.CertResolver != "" {
			errs = append(errs, field.Forbidden(tp.Child("certResolver"), "tls takes secretName or certResolver, not both"))
		}
		if t.SecretName != "" {
			for _, msg := range validation.IsDNS1123Subdomain(t.SecretName) {
				errs = append(errs, field.Invalid(tp.Child("secretName"), t.SecretName, msg))
			}
		}
		if strings.ContainsAny(t.CertResolver, CertResolverForbidden) {
			errs = append(errs, field.Invalid(tp.Child("certResolver"), t.CertResolver, "must hold no quote, backquote or backslash"))
		}
		if len(s.PublicPorts()) == 0 {
			errs = append(errs, field.Forbidden(tp, "tls needs a public port: it applies to the routes of public ports"))
		}
	}
	return errs
}

// CertResolverForbidden are the characters spec.tls.certResolver cannot
// hold (the CRD's pattern, ^[^`"\\]+$).
const CertResolverForbidden = "`\"\\"

// validateMiddlewares checks spec.middlewares the way the CRD does: DNS
// names, each once, and only with a public port.
func validateMiddlewares(s Spec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, m := range s.Middlewares {
		np := path.Child("middlewares").Index(i).Child("name")
		for _, msg := range validation.IsDNS1123Subdomain(m.Name) {
			errs = append(errs, field.Invalid(np, m.Name, msg))
		}
		if seen[m.Name] {
			errs = append(errs, field.Duplicate(np, m.Name))
		}
		seen[m.Name] = true
	}
	if len(s.Middlewares) > 0 && len(s.PublicPorts()) == 0 {
		errs = append(errs, field.Forbidden(path.Child("middlewares"), "middlewares need a public port: they apply to the routes of public ports"))
	}
	return errs
}

// validateMetrics checks spec.metrics as the CRD does: its port is a
// declared port, its path a route path.
func validateMetrics(s Spec, path *field.Path) field.ErrorList {
	m := s.Metrics
	if m == nil {
		return nil
	}
	var errs field.ErrorList
	if m.Path != "" && !routePath.MatchString(m.Path) {
		errs = append(errs, field.Invalid(path.Child("path"), m.Path, validation.RegexError("must start with / and hold only letters, digits and -._~/%", RoutePathPattern, "/metrics")))
	}
	if m.Port == "" {
		return append(errs, field.Required(path.Child("port"), "the name of a declared port"))
	}
	for _, port := range s.Ports {
		if port.Name == m.Port {
			return errs
		}
	}
	return append(errs, field.Invalid(path.Child("port"), m.Port, "metrics.port must name a declared port"))
}

// validateErrorPages checks spec.errorPages.brand as the CRD does: a DNS
// label (it goes into the errors Middleware's query as it is), and only
// with the pages on.
func validateErrorPages(e *ErrorPages, path *field.Path) field.ErrorList {
	if e == nil || e.Brand == "" {
		return nil
	}
	var errs field.ErrorList
	p := path.Child("brand")
	for _, msg := range validation.IsDNS1123Label(e.Brand) {
		errs = append(errs, field.Invalid(p, e.Brand, msg))
	}
	if e.Enabled != nil && !*e.Enabled {
		errs = append(errs, field.Forbidden(p, "errorPages.brand needs errorPages.enabled: a brand is drawn only on the branded pages"))
	}
	return errs
}
