//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// servedRoutesStay is the replay check of routable for the routes that
// have been routable since they were created: a new resource's
// IngressRoute is created referring to the Middlewares of the same answer
// (hooks/internal/children/wiring.go), and until they exist Traefik leaves
// it out, which disables nothing that served. Once routable, a route must
// stay so after every write; one deleted and made again is new again.
func servedRoutesStay(ns string) func(mirror) error {
	served := map[string]bool{}
	return func(m mirror) error {
		var errs []error
		for name := range served {
			if _, ok := m["ingressroutes"][name]; !ok {
				delete(served, name)
			}
		}
		for name, ir := range m["ingressroutes"] {
			err := routeRoutable(m, ns, ir)
			switch {
			case err == nil:
				served[name] = true
			case served[name]:
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
}

// routable is what Traefik with its default provider flags needs to route
// every IngressRoute of ns (traefik/traefik@v3.7.13 pkg/provider/kubernetes/crd/kubernetes.go
// and pkg/server/middleware/middlewares.go), judged on
// m, the namespace's objects as a watch saw them after one write: each
// middleware a route uses exists in ns; an errors Middleware's service is in
// ns and exists; and that Service has an EndpointSlice with a serving
// endpoint on a port of the Service's port name. Any of these missing, for
// as long as Traefik looks, disables the route.
func routable(m mirror, ns string) error {
	var errs []error
	for _, ir := range m["ingressroutes"] {
		errs = append(errs, routeRoutable(m, ns, ir))
	}
	return errors.Join(errs...)
}

// routeRoutable is routable for the one IngressRoute ir.
func routeRoutable(m mirror, ns string, ir obj) error {
	{
		rs, _ := framework.Dig(ir, "spec", "routes").([]any)
		for _, r := range rs {
			mws, _ := framework.Dig(r, "middlewares").([]any)
			for _, mwRef := range mws {
				name, _ := framework.Dig(mwRef, "name").(string)
				if mns, _ := framework.Dig(mwRef, "namespace").(string); mns != "" && mns != ns {
					return fmt.Errorf("IngressRoute %v uses Middleware %s/%s of another namespace", framework.Dig(ir, "metadata", "name"), mns, name)
				}
				mw, ok := m["middlewares"][name]
				if !ok {
					return fmt.Errorf("IngressRoute %v uses Middleware %s, which does not exist", framework.Dig(ir, "metadata", "name"), name)
				}
				svc, _ := framework.Dig(mw, "spec", "errors", "service").(map[string]any)
				if svc == nil {
					continue
				}
				if sns, _ := svc["namespace"].(string); sns != "" && sns != ns {
					return fmt.Errorf("Middleware %s points at Service %s/%v of another namespace", name, sns, svc["name"])
				}
				if err := servable(m, fmt.Sprint(svc["name"])); err != nil {
					return fmt.Errorf("Middleware %s: %w", name, err)
				}
			}
		}
	}
	return nil
}

// servable: the Service exists and one of its EndpointSlices has a serving
// endpoint on a port named as the Service's first port.
func servable(m mirror, name string) error {
	svc, ok := m["services"][name]
	if !ok {
		return fmt.Errorf("Service %s does not exist", name)
	}
	ports, _ := framework.Dig(svc, "spec", "ports").([]any)
	if len(ports) == 0 {
		return fmt.Errorf("Service %s has no port", name)
	}
	portName, _ := framework.Dig(ports[0], "name").(string)
	n := 0
	for _, sl := range m["endpointslices"] {
		if framework.Dig(sl, "metadata", "labels", "kubernetes.io/service-name") != name {
			continue
		}
		n++
		named := false
		sps, _ := sl["ports"].([]any)
		for _, p := range sps {
			if pn, _ := framework.Dig(p, "name").(string); pn == portName {
				named = true
			}
		}
		eps, _ := sl["endpoints"].([]any)
		for _, e := range eps {
			addrs, _ := framework.Dig(e, "addresses").([]any)
			if named && framework.Dig(e, "conditions", "serving") != false && len(addrs) > 0 {
				return nil
			}
		}
	}
	return fmt.Errorf("Service %s has no EndpointSlice with a serving endpoint on port %q (%d slices)", name, portName, n)
}

// settleRoutable is settle (mcwatch_test.go) for a phase that began at mark
// and since, then checks, on every single write the watch saw in that
// phase, that every route of the namespace stays routable.
func settleRoutable(t *testing.T, w *nsWatch, mark int, since time.Time, name, phase string) (framework.HookExchange, writes) {
	t.Helper()
	ex, ws := settle(t, w, mark, since, name, phase)
	for _, b := range w.replay(mark, servedRoutesStay(w.ns)) {
		t.Errorf("%s: a route would be disabled %s", phase, b)
	}
	return ex, ws
}

// appHandler is the app behind Traefik: 200 on /, its own 404 on /missing,
// and /status/<code> answers that code with a body of its own.
func appHandler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	switch {
	case r.URL.Path == "/":
		fmt.Fprint(w, "app ok")
	case len(r.URL.Path) == len("/status/503") && r.URL.Path[:len("/status/")] == "/status/":
		code, err := strconv.Atoi(r.URL.Path[len("/status/"):])
		if err != nil {
			code = http.StatusBadRequest
		}
		w.WriteHeader(code)
		fmt.Fprintf(w, "app says %d", code)
	default:
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "app's own 404")
	}
}

// waitReadyAddress waits until a Service's EndpointSlices list ip ready.
func waitReadyAddress(t *testing.T, ns, service, ip string) {
	t.Helper()
	err := framework.WaitUntil(60*time.Second, 200*time.Millisecond, fmt.Sprintf("%s ready in the EndpointSlices of %s/%s", ip, ns, service), func() (bool, error) {
		addrs, err := suite.cluster.Kube.ReadyAddresses(t.Context(), ns, service)
		if err != nil {
			return false, err
		}
		for _, a := range addrs {
			if a == ip {
				return true, nil
			}
		}
		return false, fmt.Errorf("ready addresses %v", addrs)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// childNames is the set of Kind/name of a sync answer's children.
func childNames(resp obj) map[string]bool {
	out := map[string]bool{}
	children, _ := resp["children"].([]any)
	for _, c := range children {
		out[fmt.Sprint(framework.Dig(c, "kind"))+"/"+fmt.Sprint(framework.Dig(c, "metadata", "name"))] = true
	}
	return out
}

func setOf(items ...string) map[string]bool {
	m := map[string]bool{}
	for _, it := range items {
		m[it] = true
	}
	return m
}

func suiteChart() string { return suite.root + "/chart" }

// requirePagesCondition checks the ErrorPages condition of a sync answer's
// status; status "" means the status carries none.
func requirePagesCondition(t *testing.T, phase string, resp obj, status, reason string) {
	t.Helper()
	c := condition(resp, "ErrorPages")
	switch {
	case status == "" && c != nil:
		t.Errorf("%s: status carries an ErrorPages condition %v, want none", phase, c)
	case status != "" && (c == nil || c["status"] != status || c["reason"] != reason):
		t.Errorf("%s: ErrorPages condition %v, want %s %s", phase, c, status, reason)
	}
}
