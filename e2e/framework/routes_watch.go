//go:build e2e

package framework

// The check that no write leaves a served Traefik route unroutable, over a
// watch of what Traefik reads (watch.go).

import (
	"errors"
	"fmt"
	"testing"
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

// RouteWatch records every write to what Traefik reads to route the
// IngressRoutes of one namespace.
type RouteWatch struct {
	NS string
	WS []*Watcher
}

// WatchRoutes watches, in namespace ns, what Traefik reads to route an
// IngressRoute (ingressroutes, middlewares, services, endpointslices) from
// now until the test ends.
func (f *NodeFixture) WatchRoutes(ns string) *RouteWatch {
	f.t.Helper()
	rw := &RouteWatch{NS: ns}
	for kind, path := range routeKinds {
		rw.WS = append(rw.WS, f.WatchPath(kind, fmt.Sprintf(path, ns)))
	}
	return rw
}

// Mark is the watch's position now: the resourceVersion of the newest
// write it has delivered. One etcd orders every write (WatchEvent.RV), so
// a write made after Mark returns has a greater one, and one with a smaller
// one was made before it, whenever it is delivered.
func (rw *RouteWatch) Mark() uint64 {
	var rv uint64
	for _, w := range rw.WS {
		for _, e := range w.Events() {
			rv = max(rv, e.RV)
		}
	}
	return rv
}

// RequireRoutesStay fails t for each write after from that left a route
// which had been routable unroutable (ServedRoutesStay), naming the write
// and phase. Call it once the phase's writes have been delivered (after a
// wait for the state they lead to).
func (rw *RouteWatch) RequireRoutesStay(t *testing.T, from uint64, phase string) {
	t.Helper()
	for _, b := range ReplayRoutes(Merged(rw.WS...), from, ServedRoutesStay(rw.NS)) {
		t.Errorf("%s: a route would be disabled %s", phase, b)
	}
}

// RouteMirror is the state of the watched objects, rebuilt event by event:
// what a controller watching them (Traefik) could see at each single write.
type RouteMirror map[string]map[string]Obj // kind → name → object

func (m RouteMirror) apply(e WatchEvent) {
	name := fmt.Sprint(Dig(e.Obj, "metadata", "name"))
	if m[e.Kind] == nil {
		m[e.Kind] = map[string]Obj{}
	}
	if e.Type == "DELETED" {
		delete(m[e.Kind], name)
		return
	}
	m[e.Kind][name] = e.Obj
}

// ReplayRoutes rebuilds the mirror from the first of events (in the order
// the API server wrote them: Merged) and calls check after each (a check
// may keep what it saw), returning what check found after each write with
// a resourceVersion greater than from, each named by the write that broke
// it.
func ReplayRoutes(events []WatchEvent, from uint64, check func(RouteMirror) error) []string {
	m := RouteMirror{}
	var broken []string
	for _, e := range events {
		m.apply(e)
		err := check(m)
		if e.RV > from && err != nil {
			broken = append(broken, fmt.Sprintf("after %s %s/%v (rv %d): %v", e.Type, e.Kind, Dig(e.Obj, "metadata", "name"), e.RV, err))
		}
	}
	return broken
}

// ServedRoutesStay is the replay check of RouteRoutable for the routes that
// have been routable since they were created: a new resource's
// IngressRoute is created referring to the Middlewares of the same answer
// (hooks/internal/children/wiring.go), and until they exist Traefik leaves
// it out, which disables nothing that served. Once routable, a route must
// stay so after every write; one deleted and made again is new again.
func ServedRoutesStay(ns string) func(RouteMirror) error {
	served := map[string]bool{}
	return func(m RouteMirror) error {
		var errs []error
		for name := range served {
			if _, ok := m["route"][name]; !ok {
				delete(served, name)
			}
		}
		for name, ir := range m["route"] {
			err := RouteRoutable(m, ns, ir)
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

// RouteRoutable is what Traefik with its default provider flags needs to
// route the IngressRoute ir of ns (traefik/traefik@v3.7.13
// pkg/provider/kubernetes/crd/kubernetes.go and
// pkg/server/middleware/middlewares.go), judged on m, the namespace's
// objects as a watch saw them after one write: each Middleware a route uses
// exists in ns; an errors Middleware's Service is in ns and exists; and that
// Service has an EndpointSlice with a serving endpoint on a port of the
// Service's port name. Any of these missing, for as long as Traefik looks,
// disables the route.
func RouteRoutable(m RouteMirror, ns string, ir Obj) error {
	irName := Dig(ir, "metadata", "name")
	for _, r := range anySlice(Dig(ir, "spec", "routes")) {
		for _, ref := range anySlice(Dig(r, "middlewares")) {
			name, _ := Dig(ref, "name").(string)
			if mns, _ := Dig(ref, "namespace").(string); mns != "" && mns != ns {
				return fmt.Errorf("the IngressRoute %v uses Middleware %s/%s of another namespace", irName, mns, name)
			}
			mw, ok := m["middleware"][name]
			if !ok {
				return fmt.Errorf("the IngressRoute %v uses Middleware %s, which does not exist", irName, name)
			}
			svc, _ := Dig(mw, "spec", "errors", "service").(map[string]any)
			if svc == nil {
				continue
			}
			if sns, _ := svc["namespace"].(string); sns != "" && sns != ns {
				return fmt.Errorf("the Middleware %s points at Service %s/%v of another namespace", name, sns, svc["name"])
			}
			if err := servable(m, fmt.Sprint(svc["name"])); err != nil {
				return fmt.Errorf("the Middleware %s: %w", name, err)
			}
		}
	}
	return nil
}

// servable: the Service exists and one of its EndpointSlices has a serving
// endpoint on a port named as the Service's first port.
func servable(m RouteMirror, name string) error {
	svc, ok := m["service"][name]
	if !ok {
		return fmt.Errorf("the Service %s does not exist", name)
	}
	ports := anySlice(Dig(svc, "spec", "ports"))
	if len(ports) == 0 {
		return fmt.Errorf("the Service %s has no port", name)
	}
	portName, _ := Dig(ports[0], "name").(string)
	n := 0
	for _, sl := range m["slice"] {
		if Dig(sl, "metadata", "labels", "kubernetes.io/service-name") != name {
			continue
		}
		n++
		named := false
		for _, p := range anySlice(sl["ports"]) {
			if pn, _ := Dig(p, "name").(string); pn == portName {
				named = true
			}
		}
		for _, e := range anySlice(sl["endpoints"]) {
			if named && Dig(e, "conditions", "serving") != false && len(anySlice(Dig(e, "addresses"))) > 0 {
				return nil
			}
		}
	}
	return fmt.Errorf("the Service %s has no EndpointSlice with a serving endpoint on port %q (%d slices)", name, portName, n)
}

// anySlice is v as a JSON array, or nil.
func anySlice(v any) []any { s, _ := v.([]any); return s }
