package schema

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestValidateBrand: spec.errorPages.brand is refused as the CRD refuses it
// (e2e/admission_platform_test.go runs the same specs through the API
// server), each message naming the field.
func TestValidateBrand(t *testing.T) {
	on, off := true, false
	spec := func(e ErrorPages) Spec {
		return Spec{Type: TypeService, Image: "i", Host: "a.example.com", Ports: []Port{{Name: "http", Port: 80, Public: true}}, ErrorPages: &e}
	}
	tests := map[string]struct {
		spec Spec
		want string
	}{
		"a brand":             {spec: spec(ErrorPages{Brand: "acme-pay"})},
		"a brand, pages on":   {spec: spec(ErrorPages{Enabled: &on, Brand: "acme-pay"})},
		"pages off, none":     {spec: spec(ErrorPages{Enabled: &off})},
		"markup in the name":  {spec: spec(ErrorPages{Brand: "<b>acme</b>"}), want: `invalid spec: spec.errorPages.brand: Invalid value: "<b>acme</b>": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		"a query in the name": {spec: spec(ErrorPages{Brand: "acme&brand=x"}), want: `invalid spec: spec.errorPages.brand: Invalid value: "acme&brand=x": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		"too long":            {spec: spec(ErrorPages{Brand: "a234567890123456789012345678901234567890123456789012345678901234"}), want: `invalid spec: spec.errorPages.brand: Invalid value: "a234567890123456789012345678901234567890123456789012345678901234": must be no more than 63 characters`},
		"a brand, pages off":  {spec: spec(ErrorPages{Enabled: &off, Brand: "acme"}), want: "invalid spec: spec.errorPages.brand: Forbidden: needs errorPages.enabled: a brand is drawn only on the branded pages"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := ""
			if err := Validate(tc.spec); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidateMetrics: spec.metrics.port must be a declared port, as the
// CRD's rule says (e2e/admission_platform_test.go).
func TestValidateMetrics(t *testing.T) {
	ports := []Port{{Name: "http", Port: 8080}, {Name: "metrics", Port: 9090}}
	tests := map[string]struct {
		spec Spec
		want string
	}{
		"a declared port": {spec: Spec{Type: TypeService, Image: "i", Ports: ports, Metrics: &Metrics{Port: "metrics"}}},
		"with a path":     {spec: Spec{Type: TypeService, Image: "i", Ports: ports, Metrics: &Metrics{Port: "http", Path: "/admin/metrics"}}},
		"not declared":    {spec: Spec{Type: TypeService, Image: "i", Ports: ports, Metrics: &Metrics{Port: "prom"}}, want: `invalid spec: spec.metrics.port: Not found: "prom"`},
		"no ports at all": {spec: Spec{Type: TypeService, Image: "i", Metrics: &Metrics{Port: "metrics"}}, want: `invalid spec: spec.metrics.port: Not found: "metrics"`},
		"no port named":   {spec: Spec{Type: TypeService, Image: "i", Ports: ports, Metrics: &Metrics{}}, want: "invalid spec: spec.metrics.port: Required value: the name of a declared port"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := ""
			if err := Validate(tc.spec); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}
