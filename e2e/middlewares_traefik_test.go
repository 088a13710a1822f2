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

// TestTeamMiddlewaresThroughTraefik proves spec.middlewares on a real Traefik
// with its default provider flags, the chart installed with its error pages: a
// Middleware the spec names that exists is on every route, in the spec's order,
// before the errors Middleware; one that does not exist is never referred to,
// so the route stays enabled and serves, and status names it (Middlewares False
// MiddlewareNotFound); once it is created (which relates it: the real
// Metacontroller watches the related objects the customize answer names) the
// next sync attaches it; once one is deleted the next sync drops it and the
// route serves again. After every single write of every sync (read from a watch
// of the namespace) no route refers to a Middleware that does not exist, and
// every router Traefik builds is enabled.
func TestTeamMiddlewaresThroughTraefik(t *testing.T) {
	requireStackResourceCRD(t)
	host := requireHost(t)
	ctx := t.Context()
	k := suite.cluster.Kube
	tr := installTraefik(t)
	ns := newNamespace(t)
	w := watchNamespace(t, ns)
	const appName, appHost = "ledger", "ledger.e2e.test"
	guest := host.GuestIP.String()
	rel := newPagesRelease(t, "stackdome")
	rel.install(t, "")

	port, _ := host.Serve(t, guest, 0, func(rw http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/status/503") {
			rw.WriteHeader(http.StatusServiceUnavailable)
		}
		fmt.Fprintf(rw, "ledger %s", r.URL.Path)
	})

	mwPath := "/apis/traefik.io/v1alpha1/namespaces/" + ns + "/middlewares"
	headerMiddleware := func(name, header string) {
		t.Helper()
		if _, err := k.Create(ctx, mwPath, obj{"apiVersion": "traefik.io/v1alpha1", "kind": "Middleware", "metadata": obj{"name": name},
			"spec": obj{"headers": obj{"customResponseHeaders": obj{header: name}}}}); err != nil {
			t.Fatal(err)
		}
	}
	headerMiddleware("team-headers", "X-Team")

	mark, since := w.mark(), time.Now()
	if _, err := k.Create(ctx, "/apis/stackdome.io/v1alpha1/namespaces/"+ns+"/stackresources", obj{
		"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource", "metadata": obj{"name": appName},
		"spec": obj{"type": "Service", "image": "example.invalid/ledger:1", "host": appHost,
			"middlewares": []any{obj{"name": "team-headers"}, obj{"name": "late-headers"}},
			"ports":       []any{obj{"name": "http", "port": port, "public": true}}},
	}); err != nil {
		t.Fatal(err)
	}
	// settlePhase waits for the real Metacontroller, the phase begun at mark and
	// since; checked on every write of the phase, every route stays
	// routable unless the phase is the team's own deletion.
	settlePhase := func(phase string, checkRoutes bool) obj {
		t.Helper()
		var ex framework.HookExchange
		if checkRoutes {
			ex, _ = settleRoutable(t, w, mark, since, appName, phase)
		} else {
			ex, _ = settle(t, w, mark, since, appName, phase)
		}
		mark, since = w.mark(), time.Now()
		return ex.Response
	}
	ref := func(name string) string { return ns + "-" + name + "@kubernetescrd" }
	errorsMW := ref(appName + "-errors")
	// get asks the app's route for /books on web and returns the team
	// headers it carries.
	get := func(phase string) (xTeam, xLate string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, tr.Web+"/books", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = appHost
		resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
		if err != nil {
			t.Fatalf("%s: %v", phase, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: GET http://%s/books: %s, want the app's 200", phase, appHost, resp.Status)
		}
		return resp.Header.Get("X-Team"), resp.Header.Get("X-Late")
	}
	requireMiddlewaresCondition := func(phase string, res obj, status, reason, mentions string) {
		t.Helper()
		c := condition(res, "Middlewares")
		msg, _ := c["message"].(string)
		if c == nil || c["status"] != status || c["reason"] != reason || !strings.Contains(msg, mentions) {
			t.Errorf("%s: Middlewares condition %v, want %s %s mentioning %q", phase, c, status, reason, mentions)
		} else {
			t.Logf("%s: Middlewares %s %s: %s", phase, status, reason, msg)
		}
	}

	// One of the two exists: it is on the route before the errors
	// Middleware, the missing one is named in status.
	res := settlePhase("one missing", true)
	requireMiddlewaresCondition("one missing", res, "False", "MiddlewareNotFound", `"late-headers"`)
	requirePagesCondition(t, "one missing", res, "True", "Wired")
	pods := waitPods(t, ns, "app.kubernetes.io/instance="+appName, 1)
	suite.kubelet.RunPod(t, ns, pods[0], guest)
	waitReadyAddress(t, ns, appName, guest)
	waitRouters(t, tr, "one missing: the route with team-headers then errors", appRouterWith(appHost, ref("team-headers"), errorsMW))
	if team, late := get("one missing"); team != "team-headers" || late != "" {
		t.Errorf("one missing: X-Team %q X-Late %q, want team-headers and none", team, late)
	}

	// The missing one is created: attached in the spec's order.
	headerMiddleware("late-headers", "X-Late")
	res = settlePhase("created", true)
	requireMiddlewaresCondition("created", res, "True", "Attached", `"team-headers", "late-headers"`)
	waitRouters(t, tr, "created: both, in order, then errors", appRouterWith(appHost, ref("team-headers"), ref("late-headers"), errorsMW))
	if team, late := get("created"); team != "team-headers" || late != "late-headers" {
		t.Errorf("created: X-Team %q X-Late %q, want both", team, late)
	}
	// The errors Middleware still follows the team's: the app's 503 is the
	// branded page, the team's header on it.
	a, err := through(tr.Web, appHost, "/status/503", browserAccept, "")
	if err != nil {
		t.Fatal(err)
	} else if err := isPage(503, "503 Service Unavailable", "")(a); a.status != http.StatusServiceUnavailable || err != nil {
		t.Errorf("created: the app's 503: %d %v, want the branded page", a.status, err)
	}

	// One is deleted: until the next sync Traefik disables the route (its
	// own rule; the deletion is what resyncs the resource), and the next
	// sync drops the reference. The team's deletion breaks the route
	// itself, so this phase is not checked write by write.
	if err := k.Do(ctx, "DELETE", mwPath+"/team-headers", "", nil, nil); err != nil {
		t.Fatal(err)
	}
	res = settlePhase("deleted", false)
	requireMiddlewaresCondition("deleted", res, "False", "MiddlewareNotFound", `"team-headers"`)
	waitRouters(t, tr, "deleted: late-headers then errors", appRouterWith(appHost, ref("late-headers"), errorsMW))
	if team, late := get("deleted"); team != "" || late != "late-headers" {
		t.Errorf("deleted: X-Team %q X-Late %q, want none and late-headers", team, late)
	}
	rs, err := tr.Routers()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if strings.Contains(r.Rule, appHost) && (r.Status != "enabled" || slices.Contains(r.Middlewares, ref("team-headers"))) {
			t.Errorf("deleted: router %s is %s with %v", r.Name, r.Status, r.Middlewares)
		}
	}
}
