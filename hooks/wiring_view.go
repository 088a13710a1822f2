package hooks

import (
	"bytes"
	"encoding/json"
	"net/netip"

	"github.com/stackdome/stackdome/metacontroller"
)

// What a sync request tells about the error wiring: the related error-page
// Service's address and the observed wiring children.

// errorService is the part of the chart's error-page Service the hook reads.
// The one-pass decoder reads every related object as a pod, so the pod
// carries the same fields (pod.Metadata, pod.Spec).
type errorService struct {
	Metadata meta        `json:"metadata"`
	Spec     serviceSpec `json:"spec"`
}

// relatedService is what a sync request tells of the chart's error-page
// Service: whether it carries it at all, and its ClusterIP when it has a
// usable one. A request without it is the wiring's blind spot — a sync hook
// at version v1, a chart without error pages, another release's namespace —
// and status says so (pagesCondition).
type relatedService struct {
	seen  bool
	addrs []netip.Addr
}

// relatedServiceOf reads the chart's error-page Service found under a
// related key. Metacontroller keys a related object by name (sync hook v1)
// or namespace/name (v2); an object that says it lives in another namespace
// than cfg's is not that Service.
func relatedServiceOf(md meta, spec serviceSpec, cfg Config) relatedService {
	if md.Namespace != "" && md.Namespace != cfg.ErrorService.Namespace {
		return relatedService{}
	}
	return relatedService{seen: true, addrs: spec.clusterIP()}
}

type serviceSpec struct {
	ClusterIP  string   `json:"clusterIP"`
	ClusterIPs []string `json:"clusterIPs"`
}

// clusterIP is the primary ClusterIP of a Service spec (clusterIPs[0], else
// clusterIP), or none for a headless Service or one without a usable address.
func (s serviceSpec) clusterIP() []netip.Addr {
	ip := s.ClusterIP
	if len(s.ClusterIPs) > 0 {
		ip = s.ClusterIPs[0]
	}
	a, err := netip.ParseAddr(ip)
	if err != nil || !usable(a) {
		return nil
	}
	return []netip.Addr{a}
}

// usable says an address may be an endpoint: the API server refuses
// unspecified, loopback, link-local and multicast ones in an EndpointSlice.
func usable(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsValid() && a.Zone() == "" && !a.IsUnspecified() && !a.IsLoopback() && !a.IsLinkLocalUnicast() && !a.IsMulticast()
}

// relatedErrorService finds the chart's error-page Service among the related
// objects, in either hook version's key form. A related object of an
// unexpected shape reads as a Service without a usable address: it changes
// nothing else.
func relatedErrorService(related metacontroller.Objects, cfg Config) relatedService {
	raw, ok := related.Named(groupService, cfg.ErrorService.Namespace, cfg.ErrorService.Name)
	if !ok {
		return relatedService{}
	}
	var s errorService
	if json.Unmarshal(raw, &s) != nil {
		return relatedService{seen: true}
	}
	return relatedServiceOf(s.Metadata, s.Spec, cfg)
}

// wiring fields of the observed children the hook reads; the one-pass decoder
// reads every child as a workload, so workload carries them.

// sliceAddresses are the usable addresses of an observed EndpointSlice, in
// order, without duplicates.
func (w *workload) sliceAddresses() []netip.Addr {
	var out []netip.Addr
	seen := map[netip.Addr]bool{}
	for _, e := range w.Endpoints {
		for _, s := range e.Addresses {
			a, err := netip.ParseAddr(s)
			if err != nil || !usable(a) || seen[a] {
				continue
			}
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// refersTo says an observed IngressRoute has a route using the Middleware
// mw of its own namespace.
func (w *workload) refersTo(mw string) bool {
	for _, r := range w.Spec.Routes {
		for _, m := range r.Middlewares {
			if m.Name == mw && (m.Namespace == "" || m.Namespace == w.Metadata.Namespace) {
				return true
			}
		}
	}
	return false
}

// errorsService is an observed Middleware's errors service, or nil.
func (w *workload) errorsService() *serviceRef {
	if w.Spec.Errors == nil || w.Spec.Errors.Service.Name == "" || len(w.Spec.Errors.Service.Port) == 0 {
		return nil
	}
	s := w.Spec.Errors.Service
	var compact bytes.Buffer
	if json.Compact(&compact, s.Port) != nil {
		return nil
	}
	s.Port = compact.Bytes()
	return &s
}

// viewWiring reads the wiring view from the observed children (each child
// decoded by child; a child that does not decode reads as missing) and the
// related error-page Service.
func viewWiring(name, namespace string, child func(group, name string) *workload, related relatedService) wiringView {
	v := wiringView{related: related}
	if s := child(groupEndpointSlice, errorPagesName(name)); s != nil {
		v.slice = s.sliceAddresses()
	}
	v.serviceObserved = child(groupService, errorPagesName(name)) != nil
	if m := child(groupMiddleware, middlewareName(name)); m != nil {
		v.middleware = m.errorsService()
	}
	if r := child(groupIngressRoute, name); r != nil {
		r.Metadata.Namespace = namespace
		v.routeRefers = r.refersTo(middlewareName(name))
		v.routes.routeStrips = r.refersTo(stripName(name))
	}
	v.routes.read(name, namespace, child)
	return v
}

// childOf looks up and decodes an observed child of a raw request; one that
// does not decode reads as missing.
func childOf(children metacontroller.Objects, namespace string) func(group, name string) *workload {
	return func(group, name string) *workload {
		raw, ok := children.Named(group, namespace, name)
		if !ok {
			return nil
		}
		w := new(workload)
		if json.Unmarshal(raw, w) != nil {
			return nil
		}
		return w
	}
}
