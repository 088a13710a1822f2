//go:build e2e

package e2e

import "testing"

// TestAdmissionPlatformFields runs the fields of #26 through the real API
// server (a dry run): what the CRD admits and what it refuses, in the words
// schema.Validate uses for the same rule (schema/twodoors_test.go, which runs
// one table through both in process).
func TestAdmissionPlatformFields(t *testing.T) {
	requireStackResourceCRD(t)
	ns := newNamespace(t)
	path := "/apis/stackdome.io/v1alpha1/namespaces/" + ns + "/stackresources?dryRun=All"
	public := obj{"host": "a.example.com", "ports": []any{obj{"name": "http", "port": 8080, "public": true}}}
	with := func(edits obj) obj {
		s := specWith(public)
		for k, v := range edits {
			s[k] = v
		}
		return s
	}
	cases := map[string]admissionCase{
		"a brand":                  {spec: with(obj{"errorPages": obj{"brand": "acme-pay"}})},
		"a brand with pages on":    {spec: with(obj{"errorPages": obj{"enabled": true, "brand": "acme-pay"}})},
		"a brand name with markup": {spec: with(obj{"errorPages": obj{"brand": "<b>acme</b>"}}), want: []string{"spec.errorPages.brand", "should match"}},
		"a query in the brand":     {spec: with(obj{"errorPages": obj{"brand": "acme&brand=x"}}), want: []string{"spec.errorPages.brand", "should match"}},
		"a brand too long": {spec: with(obj{"errorPages": obj{"brand": "a234567890123456789012345678901234567890123456789012345678901234"}}),
			want: []string{"spec.errorPages.brand", "may not be more than 63"}},
		"a brand with pages off": {spec: with(obj{"errorPages": obj{"enabled": false, "brand": "acme"}}),
			want: []string{"errorPages.brand needs errorPages.enabled"}},
		"a NetworkPolicy":                   {spec: with(obj{"networkPolicy": obj{"enabled": true}})},
		"no NetworkPolicy":                  {spec: with(obj{"networkPolicy": obj{"enabled": false}})},
		"the platform's choice":             {spec: with(obj{"networkPolicy": obj{}})},
		"networkPolicy as a boolean":        {spec: with(obj{"networkPolicy": true}), want: []string{"spec.networkPolicy", "must be of type object"}},
		"networkPolicy.enabled as a string": {spec: with(obj{"networkPolicy": obj{"enabled": "yes"}}), want: []string{"spec.networkPolicy.enabled", "boolean"}},
	}
	metrics := func(m obj) obj {
		return with(obj{"ports": []any{obj{"name": "http", "port": 8080, "public": true}, obj{"name": "metrics", "port": 9090}}, "metrics": m})
	}
	cases["a metrics port"] = admissionCase{spec: metrics(obj{"port": "metrics"})}
	cases["a metrics port and path"] = admissionCase{spec: metrics(obj{"port": "http", "path": "/admin/metrics"})}
	cases["a metrics port not declared"] = admissionCase{spec: metrics(obj{"port": "prom"}), want: []string{"metrics.port must name a declared port"}}
	cases["metrics without a port"] = admissionCase{spec: metrics(obj{"path": "/metrics"}), want: []string{"spec.metrics.port", "Required value"}}
	cases["a metrics path not a path"] = admissionCase{spec: metrics(obj{"port": "metrics", "path": "metrics"}), want: []string{"spec.metrics.path", "should match"}}
	tryAdmission(t, path, cases)
}
