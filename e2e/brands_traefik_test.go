//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestBrandsThroughTraefik: the chart installed with two brands, its brand
// file read by the real page server; an app that picks acme-pay gets an
// errors Middleware asking for it (?brand=acme-pay in the query), and its
// 503 through a real Traefik v3.7 is acme-pay's page — name and copy — with
// the status kept, while an API client still gets the JSON envelope and an
// unknown host the default brand's 404 from the catch-all.
func TestBrandsThroughTraefik(t *testing.T) {
	requireStackResourceCRD(t)
	host := requireHost(t)
	ctx := t.Context()
	k := suite.cluster.Kube
	tr := installTraefik(t)
	const appName, appHost = "pay", "pay.e2e.test"
	rel := newPagesRelease(t, "stackdome")
	appNS := newNamespace(t)
	w := watchNamespace(t, appNS)
	guest := host.GuestIP.String()

	appPort, _ := host.Serve(t, guest, 0, appHandler)

	rel.install(t, "", "config.entryPoints={web}",
		"errorPages.defaultBrand=northwind",
		"errorPages.brands[0].name=acme-pay", "errorPages.brands[0].displayName=Acme Pay",
		"errorPages.brands[0].colors.light.accent=#0f766e",
		"errorPages.brands[0].pages.503.title=Payments are paused for a moment",
		"errorPages.brands[1].name=northwind", "errorPages.brands[1].displayName=Northwind Traders")
	mark, since := w.mark(), time.Now()
	if _, err := k.Create(ctx, "/apis/stackdome.io/v1alpha1/namespaces/"+appNS+"/stackresources", obj{
		"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource",
		"metadata": obj{"name": appName},
		"spec": obj{
			"type": "Service", "image": "example.invalid/pay:1", "replicas": 1, "host": appHost,
			"ports":      []any{obj{"name": "http", "port": appPort, "public": true}},
			"errorPages": obj{"brand": "acme-pay"},
		},
	}); err != nil {
		t.Fatal(err)
	}
	res, _ := settleRoutable(t, w, mark, since, appName, "branded")
	requirePagesCondition(t, "branded", res.Response, "True", "Wired")
	if q := middlewareQuery(res.Response, appName+"-errors"); q != "/_errors/{status}?brand=acme-pay" {
		t.Errorf("the errors Middleware's query is %q, want the brand in it", q)
	}
	pods := waitPods(t, appNS, "app.kubernetes.io/instance="+appName, 1)
	suite.kubelet.RunPod(t, appNS, pods[0], guest)
	waitReadyAddress(t, appNS, appName, guest)
	waitRouters(t, tr, "branded: the app's router with its errors Middleware", appRouterWith(appHost, appNS+"-"+appName+"-errors@kubernetescrd"))
	runChecks(t, tr, "branded", []check{
		{name: "503 → acme-pay's page", host: appHost, path: "/status/503", accept: browserAccept, requestID: "e2e-brand-1", status: 503,
			want: all(isPage(503, "503 Service Unavailable", "e2e-brand-1"), hasBody("Acme Pay</div>", "<h1>Payments are paused for a moment</h1>"))},
		{name: "502 → acme-pay's 502", host: appHost, path: "/status/502", accept: browserAccept, status: 502,
			want: all(isPage(502, "502 Bad Gateway", ""), hasBody("Acme Pay</div>"))},
		{name: "502 → the JSON envelope for axios, brand or not", host: appHost, path: "/status/502", accept: axiosAccept, status: 502, want: isEnvelope(502)},
		{name: "unknown host → the default brand's 404", host: "nobody.e2e.test", path: "/x", accept: browserAccept, status: 404,
			want: all(isPage(404, "404 Not Found", ""), hasBody("Northwind Traders</div>"))},
	})
}

// middlewareQuery is spec.errors.query of the Middleware name in a sync
// answer, or "".
func middlewareQuery(resp obj, name string) string {
	children, _ := resp["children"].([]any)
	for _, c := range children {
		if framework.Dig(c, "kind") == "Middleware" && framework.Dig(c, "metadata", "name") == name {
			return fmt.Sprint(framework.Dig(c, "spec", "errors", "query"))
		}
	}
	return ""
}

// hasBody requires every fragment in the body.
func hasBody(fragments ...string) func(answer) error {
	return func(a answer) error {
		for _, f := range fragments {
			if !strings.Contains(a.body, f) {
				return fmt.Errorf("body lacks %q: %.300q", f, a.body)
			}
		}
		return nil
	}
}

// all requires every check.
func all(checks ...func(answer) error) func(answer) error {
	return func(a answer) error {
		for _, c := range checks {
			if err := c(a); err != nil {
				return err
			}
		}
		return nil
	}
}
