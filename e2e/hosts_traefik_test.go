//go:build e2e

package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestPlainHTTPNeverLandsOnTheCatchAll proves spec.hosts and the plain-HTTP
// default on a real Traefik with its default provider flags, the chart's
// catch-all installed on web and websecure (its default): an app without
// tls answers http://<host>/ for each of its hosts on web (before, its
// routes were on websecure only and plain HTTP got the catch-all's branded
// 404), and on websecure as before; an app with tls and two hosts is
// redirected from plain HTTP to HTTPS for each host, path kept. stackdome
// runs with its default entry points (websecure, and web for plain HTTP).
// After every write of every sync no route refers to a Middleware that does
// not exist, and every router Traefik builds is enabled.
func TestPlainHTTPNeverLandsOnTheCatchAll(t *testing.T) {
	requireStackResourceCRD(t)
	host := requireHost(t)
	ctx := t.Context()
	k := suite.cluster.Kube
	tr := installTraefik(t)
	ns := newNamespace(t)
	guest := host.GuestIP.String()
	rel := newPagesRelease(t, "stackdome")
	rel.install(t, "")
	w := watchNamespace(t, ns)

	port, _ := host.Serve(t, guest, 0, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "app %s %s", r.Host, r.URL.Path)
	})

	apps := map[string]obj{
		"docs": {"type": "Service", "image": "example.invalid/docs:1", "host": "docs.e2e.test", "hosts": []any{"www.docs.e2e.test"},
			"ports": []any{obj{"name": "http", "port": port, "public": true}}},
		"shop": {"type": "Service", "image": "example.invalid/shop:1", "host": "shop.e2e.test", "hosts": []any{"www.shop.e2e.test"}, "tls": obj{},
			"ports": []any{obj{"name": "http", "port": port, "public": true}}},
	}
	for _, name := range []string{"docs", "shop"} {
		mark, since := w.mark(), time.Now()
		if _, err := k.Create(ctx, "/apis/stackdome.io/v1alpha1/namespaces/"+ns+"/stackresources", obj{
			"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource", "metadata": obj{"name": name}, "spec": apps[name],
		}); err != nil {
			t.Fatal(err)
		}
		settleRoutable(t, w, mark, since, name, name)
		pods := waitPods(t, ns, "app.kubernetes.io/instance="+name, 1)
		suite.kubelet.RunPod(t, ns, pods[0], guest)
		waitReadyAddress(t, ns, name, guest)
	}
	waitRouters(t, tr, "docs on websecure and web; shop on websecure, its redirect on web", func(rs []framework.Router) error {
		var docs, shop, redirect []string
		for _, r := range rs {
			switch {
			case strings.Contains(r.Rule, "Host(`docs.e2e.test`) || Host(`www.docs.e2e.test`)"):
				docs = append(docs, r.EntryPoints...)
			case strings.Contains(r.Rule, "Host(`shop.e2e.test`) || Host(`www.shop.e2e.test`)") && slices.Contains(r.Middlewares, ns+"-shop-https@kubernetescrd"):
				redirect = append(redirect, r.EntryPoints...)
			case strings.Contains(r.Rule, "Host(`shop.e2e.test`) || Host(`www.shop.e2e.test`)"):
				shop = append(shop, r.EntryPoints...)
			}
		}
		slices.Sort(docs)
		if !slices.Equal(docs, []string{"web", "websecure"}) || !slices.Equal(shop, []string{"websecure"}) || !slices.Equal(redirect, []string{"web"}) {
			return fmt.Errorf("docs on %v, shop on %v, its redirect on %v", docs, shop, redirect)
		}
		return nil
	})

	// Plain HTTP to each host of the app without tls: the app, not the 404.
	for _, h := range []string{"docs.e2e.test", "www.docs.e2e.test"} {
		for ep, base := range map[string]string{"web": tr.Web, "websecure": tr.Websecure} {
			a, err := through(base, h, "/guide", browserAccept, "")
			if err != nil {
				t.Errorf("%s %s: %v", ep, h, err)
				continue
			}
			if want := "app " + h + " /guide"; a.status != http.StatusOK || a.body != want {
				t.Errorf("%s http://%s/guide: %d %.80q, want 200 %q (the catch-all's 404 is what plain HTTP got before)", ep, h, a.status, a.body, want)
			} else {
				t.Logf("%s http://%s/guide: 200 %q", ep, h, a.body)
			}
		}
	}
	// An unknown host still gets the catch-all's branded 404 on web.
	if a, err := through(tr.Web, "nobody.e2e.test", "/guide", browserAccept, ""); err != nil {
		t.Error(err)
	} else if err := isPage(404, "404 Not Found", "")(a); a.status != http.StatusNotFound || err != nil {
		t.Errorf("unknown host on web: %d %v, want the branded 404", a.status, err)
	}
	// Plain HTTP to each host of the TLS app: a permanent redirect to it.
	noFollow := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, h := range []string{"shop.e2e.test", "www.shop.e2e.test"} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, tr.Web+"/cart?x=1", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = h
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Errorf("web %s: %v", h, err)
			continue
		}
		resp.Body.Close()
		if want := "https://" + h + "/cart?x=1"; (resp.StatusCode != http.StatusMovedPermanently && resp.StatusCode != http.StatusPermanentRedirect) || resp.Header.Get("Location") != want {
			t.Errorf("web http://%s/cart: %s, Location %q; want a permanent redirect to %s", h, resp.Status, resp.Header.Get("Location"), want)
		} else {
			t.Logf("web http://%s/cart?x=1: %d → %s", h, resp.StatusCode, want)
		}
	}
}
