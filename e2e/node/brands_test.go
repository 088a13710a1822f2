//go:build e2e

package node

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestBrandsOnRealNode: the chart installed with two brands, its brand
// file a ConfigMap the real kubelet mounts into the page server's pod; an
// app that picks acme-pay gets an errors Middleware asking for it
// (?brand=acme-pay in its query), and through the chart's Traefik its 503
// is acme-pay's page — name, the brand's own title for the code, the
// request id the client sent — with the status kept; its 502 is acme-pay's
// 502 page to a browser and the JSON envelope to an API client; an unknown
// host is the chart catch-all's 404 in the default brand (northwind).
//
// It bites: without the brand in the Middleware's query the 503 is the
// default brand's page (no "Acme Pay"); without the brand file mounted the
// page server serves its built-in brand (neither name).
func TestBrandsOnRealNode(t *testing.T) {
	f := framework.NewNodeFixture(t)
	f.InstallChart("config.entryPoints={web}",
		"errorPages.defaultBrand=northwind",
		"errorPages.brands[0].name=acme-pay", "errorPages.brands[0].displayName=Acme Pay",
		"errorPages.brands[0].colors.light.accent=#0f766e",
		"errorPages.brands[0].pages.503.title=Payments are paused for a moment",
		"errorPages.brands[1].name=northwind", "errorPages.brands[1].displayName=Northwind Traders")
	ns := f.Namespace(nil)
	t.Cleanup(func() { f.DescribePods(ns) })
	const name, host = "pay", "pay.node.test"
	spec := framework.PortApp(framework.PortArgs("8080"), obj{"name": "http", "port": 8080, "public": true})
	spec["host"] = host
	spec["errorPages"] = obj{"brand": "acme-pay"}
	f.CreateApp(ns, name, spec)
	f.WaitCondition(3*time.Minute, ns, name, "Available", "True", "Serving")
	f.WaitCondition(time.Minute, ns, name, "ErrorPages", "True", "Wired")

	mw, err := f.Kube.Get(t.Context(), "/apis/traefik.io/v1alpha1/namespaces/"+ns+"/middlewares/"+name+"-errors")
	if err != nil {
		t.Fatal(err)
	}
	if q := framework.Dig(mw, "spec", "errors", "query"); q != "/_errors/{status}?brand=acme-pay" {
		t.Errorf("the errors Middleware's query is %v, want the brand in it", q)
	}
	f.WaitFor(time.Minute, "the app's own 200 through Traefik", func() (bool, error) {
		a, err := f.ThroughTraefikAs(t.Context(), host, "/", framework.BrowserAccept, "")
		return err == nil && a.Status == http.StatusOK, fmt.Errorf("%d %.100q %v", a.Status, a.Body, err)
	})

	for _, c := range []struct {
		name, host, path, accept, requestID string
		want                                framework.Check
	}{
		{"503 → acme-pay's page", host, "/status/503", framework.BrowserAccept, "node-brand-1",
			framework.All(framework.IsPage(503, "503 Service Unavailable", "node-brand-1"),
				framework.HasBody("Acme Pay</div>", "<h1>Payments are paused for a moment</h1>"))},
		{"502 → acme-pay's 502", host, "/status/502", framework.BrowserAccept, "",
			framework.All(framework.IsPage(502, "502 Bad Gateway", ""), framework.HasBody("Acme Pay</div>"))},
		{"502 → the JSON envelope for axios, brand or not", host, "/status/502", framework.AxiosAccept, "", framework.IsEnvelope(502)},
		{"unknown host → the default brand's 404", "nobody.node.test", "/x", framework.BrowserAccept, "",
			framework.All(framework.IsPage(404, "404 Not Found", ""), framework.HasBody("Northwind Traders</div>"))},
	} {
		a, err := f.ThroughTraefikAs(t.Context(), c.host, c.path, c.accept, c.requestID)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if err := c.want(a); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
