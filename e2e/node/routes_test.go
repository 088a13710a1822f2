//go:build e2e

package node

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

// routeKinds are the collections Traefik's Kubernetes CRD provider reads to
// route an IngressRoute of a namespace: the route, the Middlewares its
// routes name, and for an errors Middleware the Service it sends to and
// that Service's EndpointSlices.
var routeKinds = map[string]string{
	"route":      "/apis/traefik.io/v1alpha1/namespaces/%s/ingressroutes",
	"middleware": "/apis/traefik.io/v1alpha1/namespaces/%s/middlewares",
	"service":    "/api/v1/namespaces/%s/services",
	"slice":      "/apis/discovery.k8s.io/v1/namespaces/%s/endpointslices",
}

// routeWatch records every write to what Traefik reads to route the
// IngressRoutes of one namespace.
type routeWatch struct {
	ns string
	ws []*watcher
}

// watchRoutes watches, in namespace ns, what Traefik reads to route an
// IngressRoute (ingressroutes, middlewares, services, endpointslices) from
// now until the test ends.
func watchRoutes(t *testing.T, ns string) *routeWatch {
	t.Helper()
	rw := &routeWatch{ns: ns}
	for kind, path := range routeKinds {
		rw.ws = append(rw.ws, watchPath(t, kind, fmt.Sprintf(path, ns)))
	}
	return rw
}

// mark is the watch's position now: the resourceVersion of the newest
// write it has delivered. One etcd orders every write (event.RV), so a
// write made after mark returns has a greater one, and one with a smaller
// one was made before it, whenever it is delivered.
func (rw *routeWatch) mark() uint64 {
	var rv uint64
	for _, w := range rw.ws {
		for _, e := range w.Events() {
			rv = max(rv, e.RV)
		}
	}
	return rv
}

// requireRoutesStay fails t for each write after from that left a route
// which had been routable unroutable (servedRoutesStay), naming the write
// and phase. Call it once the phase's writes have been delivered (after a
// wait for the state they lead to).
func (rw *routeWatch) requireRoutesStay(t *testing.T, from uint64, phase string) {
	t.Helper()
	for _, b := range replayRoutes(merged(rw.ws...), from, servedRoutesStay(rw.ns)) {
		t.Errorf("%s: a route would be disabled %s", phase, b)
	}
}

// routeMirror is the state of the watched objects, rebuilt event by event:
// what a controller watching them (Traefik) could see at each single write.
type routeMirror map[string]map[string]obj // kind → name → object

func (m routeMirror) apply(e event) {
	name := fmt.Sprint(framework.Dig(e.Obj, "metadata", "name"))
	if m[e.Kind] == nil {
		m[e.Kind] = map[string]obj{}
	}
	if e.Type == "DELETED" {
		delete(m[e.Kind], name)
		return
	}
	m[e.Kind][name] = e.Obj
}

// replayRoutes rebuilds the mirror from the first of events (in the order
// the API server wrote them: merged) and calls check after each (a check
// may keep what it saw), returning what check found after each write with
// a resourceVersion greater than from, each named by the write that broke
// it.
func replayRoutes(events []event, from uint64, check func(routeMirror) error) []string {
	m := routeMirror{}
	var broken []string
	for _, e := range events {
		m.apply(e)
		err := check(m)
		if e.RV > from && err != nil {
			broken = append(broken, fmt.Sprintf("after %s %s/%v (rv %d): %v", e.Type, e.Kind, framework.Dig(e.Obj, "metadata", "name"), e.RV, err))
		}
	}
	return broken
}

// servedRoutesStay is the replay check of routeRoutable for the routes that
// have been routable since they were created: a new resource's
// IngressRoute is created referring to the Middlewares of the same answer
// (hooks/internal/children/wiring.go), and until they exist Traefik leaves
// it out, which disables nothing that served. Once routable, a route must
// stay so after every write; one deleted and made again is new again.
func servedRoutesStay(ns string) func(routeMirror) error {
	served := map[string]bool{}
	return func(m routeMirror) error {
		var errs []error
		for name := range served {
			if _, ok := m["route"][name]; !ok {
				delete(served, name)
			}
		}
		for name, ir := range m["route"] {
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

// routeRoutable is what Traefik with its default provider flags needs to
// route the IngressRoute ir of ns (traefik/traefik@v3.7.13
// pkg/provider/kubernetes/crd/kubernetes.go and
// pkg/server/middleware/middlewares.go), judged on m, the namespace's
// objects as a watch saw them after one write: each Middleware a route uses
// exists in ns; an errors Middleware's Service is in ns and exists; and that
// Service has an EndpointSlice with a serving endpoint on a port of the
// Service's port name. Any of these missing, for as long as Traefik looks,
// disables the route.
func routeRoutable(m routeMirror, ns string, ir obj) error {
	irName := framework.Dig(ir, "metadata", "name")
	for _, r := range toSlice(framework.Dig(ir, "spec", "routes")) {
		for _, ref := range toSlice(framework.Dig(r, "middlewares")) {
			name, _ := framework.Dig(ref, "name").(string)
			if mns, _ := framework.Dig(ref, "namespace").(string); mns != "" && mns != ns {
				return fmt.Errorf("IngressRoute %v uses Middleware %s/%s of another namespace", irName, mns, name)
			}
			mw, ok := m["middleware"][name]
			if !ok {
				return fmt.Errorf("IngressRoute %v uses Middleware %s, which does not exist", irName, name)
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
	return nil
}

// servable: the Service exists and one of its EndpointSlices has a serving
// endpoint on a port named as the Service's first port.
func servable(m routeMirror, name string) error {
	svc, ok := m["service"][name]
	if !ok {
		return fmt.Errorf("Service %s does not exist", name)
	}
	ports := toSlice(framework.Dig(svc, "spec", "ports"))
	if len(ports) == 0 {
		return fmt.Errorf("Service %s has no port", name)
	}
	portName, _ := framework.Dig(ports[0], "name").(string)
	n := 0
	for _, sl := range m["slice"] {
		if framework.Dig(sl, "metadata", "labels", "kubernetes.io/service-name") != name {
			continue
		}
		n++
		named := false
		for _, p := range toSlice(sl["ports"]) {
			if pn, _ := framework.Dig(p, "name").(string); pn == portName {
				named = true
			}
		}
		for _, e := range toSlice(sl["endpoints"]) {
			if named && framework.Dig(e, "conditions", "serving") != false && len(toSlice(framework.Dig(e, "addresses"))) > 0 {
				return nil
			}
		}
	}
	return fmt.Errorf("Service %s has no EndpointSlice with a serving endpoint on port %q (%d slices)", name, portName, n)
}
