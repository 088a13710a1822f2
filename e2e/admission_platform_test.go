//go:build e2e

package e2e

import (
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestAdmissionPlatformFields runs the fields of #26 through the real API
// server (a dry run): what the CRD admits and what it refuses, in the words
// schema.Validate uses for the same rule (schema/twodoors_test.go, which runs
// one table through both in process).
func TestAdmissionPlatformFields(t *testing.T) {
	f := framework.NewFixture(t)
	f.RequireStackResourceCRD()
	ns := f.Namespace
	path := "/apis/stackdome.io/v1alpha1/namespaces/" + ns + "/stackresources?dryRun=All"
	public := obj{"host": "a.example.com", "ports": []any{obj{"name": "http", "port": 8080, "public": true}}}
	with := func(edits obj) obj {
		s := framework.SpecWith(public)
		for k, v := range edits {
			s[k] = v
		}
		return s
	}
	cases := map[string]framework.AdmissionCase{
		"a brand":                  {Spec: with(obj{"errorPages": obj{"brand": "acme-pay"}})},
		"a brand with pages on":    {Spec: with(obj{"errorPages": obj{"enabled": true, "brand": "acme-pay"}})},
		"a brand name with markup": {Spec: with(obj{"errorPages": obj{"brand": "<b>acme</b>"}}), Want: []string{"spec.errorPages.brand", "should match"}},
		"a query in the brand":     {Spec: with(obj{"errorPages": obj{"brand": "acme&brand=x"}}), Want: []string{"spec.errorPages.brand", "should match"}},
		"a brand too long": {Spec: with(obj{"errorPages": obj{"brand": "a234567890123456789012345678901234567890123456789012345678901234"}}),
			Want: []string{"spec.errorPages.brand", "may not be more than 63"}},
		"a brand with pages off": {Spec: with(obj{"errorPages": obj{"enabled": false, "brand": "acme"}}),
			Want: []string{"errorPages.brand needs errorPages.enabled"}},
		"a NetworkPolicy":                   {Spec: with(obj{"networkPolicy": obj{"enabled": true}})},
		"no NetworkPolicy":                  {Spec: with(obj{"networkPolicy": obj{"enabled": false}})},
		"the platform's choice":             {Spec: with(obj{"networkPolicy": obj{}})},
		"networkPolicy as a boolean":        {Spec: with(obj{"networkPolicy": true}), Want: []string{"spec.networkPolicy", "must be of type object"}},
		"networkPolicy.enabled as a string": {Spec: with(obj{"networkPolicy": obj{"enabled": "yes"}}), Want: []string{"spec.networkPolicy.enabled", "boolean"}},
	}
	metrics := func(m obj) obj {
		return with(obj{"ports": []any{obj{"name": "http", "port": 8080, "public": true}, obj{"name": "metrics", "port": 9090}}, "metrics": m})
	}
	cases["a metrics port"] = framework.AdmissionCase{Spec: metrics(obj{"port": "metrics"})}
	cases["a metrics port and path"] = framework.AdmissionCase{Spec: metrics(obj{"port": "http", "path": "/admin/metrics"})}
	cases["a metrics port not declared"] = framework.AdmissionCase{Spec: metrics(obj{"port": "prom"}), Want: []string{"metrics.port must name a declared port"}}
	cases["metrics without a port"] = framework.AdmissionCase{Spec: metrics(obj{"path": "/metrics"}), Want: []string{"spec.metrics.port", "Required value"}}
	cases["a metrics path not a path"] = framework.AdmissionCase{Spec: metrics(obj{"port": "metrics", "path": "metrics"}), Want: []string{"spec.metrics.path", "should match"}}
	f.TryAdmission(path, cases)
}
