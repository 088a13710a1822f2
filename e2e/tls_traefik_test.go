//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestRoutesThroughTraefik proves a real app's routes on a real Traefik with
// its default provider flags, stackdome's answers applied the way
// the real Metacontroller applies them: with spec.tls, the IngressRoute is served
// over TLS on websecure; plain HTTP to the host on web is redirected to
// HTTPS, path kept; a further public port answers at /<port name> with the
// prefix stripped, another at its own path as it is. After every single
// write of every sync no route refers to a Middleware that does not exist,
// and every router Traefik builds is enabled. The chart is installed with
// its error pages, the real Metacontroller runs its CompositeController, and an
// app's 503 on every route reaches a browser as the branded page, its
// status kept.
func TestRoutesThroughTraefik(t *testing.T) {
	requireStackResourceCRD(t)
	host := requireHost(t)
	ctx := t.Context()
	k := suite.cluster.Kube
	tr := installTraefik(t)
	ns := newNamespace(t)
	const appName, appHost = "shopfront", "store.e2e.test"
	guest := host.GuestIP.String()
	rel := newPagesRelease(t, "stackdome")
	rel.install(t, "") // the chart's entry points: websecure, its HTTP one web
	w := watchNamespace(t, ns)
	mark, since := w.mark(), time.Now()

	// Three public ports of one app; each answers with its name and the
	// path it was asked for, and 503 to a path ending in /status/503.
	ports := map[string]int{}
	for _, name := range []string{"http", "admin", "api"} {
		ports[name], _ = host.Serve(t, guest, 0, func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/status/503") {
				w.WriteHeader(http.StatusServiceUnavailable)
			}
			fmt.Fprintf(w, "%s %s", name, r.URL.Path)
		})
	}
	if _, err := k.Create(ctx, "/apis/stackdome.io/v1alpha1/namespaces/"+ns+"/stackresources", obj{
		"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource", "metadata": obj{"name": appName},
		"spec": obj{
			"type": "Service", "image": "example.invalid/shopfront:1", "host": appHost, "tls": obj{},
			"ports": []any{
				obj{"name": "http", "port": ports["http"], "public": true},
				obj{"name": "admin", "port": ports["admin"], "public": true},
				obj{"name": "api", "port": ports["api"], "public": true, "path": "/v2"},
			},
		},
	}); err != nil {
		t.Fatal(err)
	}
	res, _ := settleRoutable(t, w, mark, since, appName, "first sync")
	want := setOf("Service/"+appName, "Deployment/"+appName, "Middleware/"+appName+"-strip", "Middleware/"+appName+"-https",
		"IngressRoute/"+appName, "IngressRoute/"+appName+"-redirect",
		"Middleware/"+appName+"-errors", "Service/"+appName+"-error-pages", "EndpointSlice/"+appName+"-error-pages")
	if got := childNames(res.Response); !equalSets(got, want) {
		t.Fatalf("children %v, want %v", keys(got), keys(want))
	}
	requirePagesCondition(t, "settled", res.Response, "True", "Wired")
	pods := waitPods(t, ns, "app.kubernetes.io/instance="+appName, 1)
	suite.kubelet.RunPod(t, ns, pods[0], guest)
	waitReadyAddress(t, ns, appName, guest)
	waitRouters(t, tr, "the app's routers: three on websecure, the redirect on web", func(rs []framework.Router) error {
		var app, redirect int
		for _, r := range rs {
			if !strings.Contains(r.Rule, appHost) {
				continue
			}
			switch {
			case len(r.EntryPoints) == 1 && r.EntryPoints[0] == "websecure":
				app++
			case len(r.EntryPoints) == 1 && r.EntryPoints[0] == "web":
				redirect++
			}
		}
		if app != 3 || redirect != 1 {
			return fmt.Errorf("%d routers on websecure, %d on web for %s", app, redirect, appHost)
		}
		return nil
	})

	// The redirect: plain HTTP on web, any path, answered by Traefik.
	noFollow := &http.Client{Timeout: 5 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, tr.Web+"/admin/settings?x=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = appHost
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if (resp.StatusCode != http.StatusMovedPermanently && resp.StatusCode != http.StatusPermanentRedirect) ||
		resp.Header.Get("Location") != "https://"+appHost+"/admin/settings?x=1" {
		t.Errorf("plain HTTP answered %s, Location %q; want a permanent redirect to https://%s/admin/settings?x=1", resp.Status, resp.Header.Get("Location"), appHost)
	}

	// TLS on websecure (Traefik's default certificate: tls {} and no
	// resolver), with SNI for the app's host.
	websecure := strings.TrimPrefix(tr.Websecure, "http://")
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{ServerName: appHost, InsecureSkipVerify: true}, // the default certificate is self-signed
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, websecure)
		},
	}}
	get := func(path, accept string) (*http.Response, []byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+appHost+":"+strconv.Itoa(443)+path, nil)
		if err != nil {
			return nil, nil, err
		}
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return resp, body, err
	}
	for path, body := range map[string]string{
		"/":               "http /",
		"/cart":           "http /cart",
		"/admin/settings": "admin /settings", // stripped
		"/admin":          "admin /",         // Traefik's stripPrefix leaves at least /
		"/v2/orders":      "api /v2/orders",  // its own path, as it is
	} {
		resp, got, err := get(path, "")
		if err != nil {
			t.Errorf("https %s: %v", path, err)
			continue
		}
		if resp.StatusCode != http.StatusOK || string(got) != body || resp.TLS == nil {
			t.Errorf("https %s: %s %q (TLS %v), want 200 %q over TLS", path, resp.Status, got, resp.TLS != nil, body)
		}
	}
	// Every route's 503 reaches a browser as the branded page.
	for _, path := range []string{"/status/503", "/admin/status/503", "/v2/status/503"} {
		resp, got, err := get(path, browserAccept)
		if err != nil {
			t.Errorf("https %s: %v", path, err)
			continue
		}
		a := answer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: string(got)}
		if a.status != http.StatusServiceUnavailable {
			t.Errorf("https %s: %s, want 503 kept", path, resp.Status)
		} else if err := isPage(503, "503 Service Unavailable", "")(a); err != nil {
			t.Errorf("https %s: %v", path, err)
		} else {
			t.Logf("https %s: 503 %s — the branded page", path, a.contentType)
		}
	}
}
