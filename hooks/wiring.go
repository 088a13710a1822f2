package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"strings"

	"github.com/stackdome/stackdome/schema"
)

// The error wiring of a resource with public ports: how its 5xx reach the
// branded pages through Traefik with Traefik's default provider flags
// (allowCrossNamespace, allowEmptyServices and allowExternalNameServices
// false). Traefik drops an errors Middleware whose Service is in another
// namespace or has no endpoints, and disables every router that refers to a
// dropped Middleware (reference/traefik-errorpages.md §2.3). So the Middleware
// points at a Service in the app's own namespace, `<name>-error-pages`,
// selectorless and headless, whose one EndpointSlice holds the ClusterIP of
// the chart's error-page Service: the service proxy (kube-proxy or its
// equivalent) takes Traefik's page requests from there to a ready page
// server. A ClusterIP outlives every rollout, restart and scale-to-zero of
// stackdome, so the only related object the wiring needs — the chart's
// Service — is not written when stackdome rolls out, and Metacontroller
// resyncs no StackResource for it.
//
// What keeps a route up:
//   - the mirrored EndpointSlice never goes empty once it had an address: when
//     the chart's Service is gone (uninstalled) or unreadable, the observed
//     slice's addresses are kept (a page that cannot be fetched is a failed
//     page, the app's status is kept; an empty slice is a dead route);
//   - the IngressRoute refers to the Middleware only once the Middleware, the
//     Service and the EndpointSlice with an address are observed, i.e. exist;
//     Metacontroller applies the children of one answer in no fixed order, so
//     a reference made in the same answer that creates them could reach
//     Traefik first;
//   - taking the wiring away goes the other way round: while the observed
//     IngressRoute still refers to the Middleware it is kept (as observed),
//     and while the observed Middleware points at the mirrored Service, that
//     Service and its slice are kept. Metacontroller deletes before it
//     updates, so dropping both in one answer would leave the route
//     referring to nothing for a moment.

// Labels of the mirrored EndpointSlice.
const (
	// LabelServiceName ties an EndpointSlice to its Service.
	LabelServiceName = "kubernetes.io/service-name"
	// LabelSliceManagedBy names the manager of an EndpointSlice; the
	// EndpointSlice controllers leave slices of another manager alone.
	LabelSliceManagedBy = "endpointslice.kubernetes.io/managed-by"
	// SliceManagedBy is stackdome's value of LabelSliceManagedBy.
	SliceManagedBy = "stackdome.io"
	// errorPortName names the port of the mirrored Service and slice; Traefik
	// matches a slice's port to the Service's by this name.
	errorPortName = "errors"
)

// errorPagesName is the mirrored error-page Service and EndpointSlice of a
// resource.
func errorPagesName(name string) string { return name + "-error-pages" }

// serviceRef is the service of an errors Middleware, as it is on the wire.
// Port is the raw JSON value (a number, or a port name).
type serviceRef struct {
	Name      string          `json:"name"`
	Namespace string          `json:"namespace,omitempty"`
	Port      json.RawMessage `json:"port"`
}

func (r serviceRef) equal(o serviceRef) bool {
	return r.Name == o.Name && r.Namespace == o.Namespace && bytes.Equal(r.Port, o.Port)
}

// wiringView is what a sync request tells about the error wiring.
type wiringView struct {
	// related is the chart's error-page Service as the request relates it.
	related relatedService
	// slice holds the addresses of the observed mirrored EndpointSlice.
	slice []netip.Addr
	// serviceObserved says the mirrored Service exists.
	serviceObserved bool
	// middleware is the observed Middleware's service; nil when no
	// Middleware is observed or its service cannot be read.
	middleware *serviceRef
	// routeRefers says the observed IngressRoute refers to the Middleware.
	routeRefers bool
	// routes is what the observed routing children say (routes.go).
	routes routesView
}

// key is v as a string: two views with the same key give the same children.
func (v wiringView) key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%t,", v.related.seen)
	for _, a := range v.related.addrs {
		b.WriteString(a.String())
		b.WriteByte(',')
	}
	b.WriteByte('|')
	for _, a := range v.slice {
		b.WriteString(a.String())
		b.WriteByte(',')
	}
	fmt.Fprintf(&b, "|%t|%t|", v.serviceObserved, v.routeRefers)
	if m := v.middleware; m != nil {
		fmt.Fprintf(&b, "%q/%q/%s", m.Namespace, m.Name, m.Port)
	}
	r := v.routes
	fmt.Fprintf(&b, "|%q|%t|%t|%t|%t", r.strip, r.strip != nil, r.httpsObserved, r.routeStrips, r.redirectRefers)
	return b.String()
}

// wiringChildren are the children that route a resource with public ports:
// the mirrored Service and EndpointSlice and the errors Middleware when they
// are wanted or still needed, then the IngressRoute. A spec without public
// ports has none. It is a pure function of its arguments.
func wiringChildren(cfg Config, name string, spec schema.Spec, v wiringView) []any {
	public := spec.PublicPorts()
	if len(public) == 0 {
		return nil
	}
	mirror := serviceRef{Name: errorPagesName(name), Port: json.RawMessage(itoa(cfg.ErrorService.Port))}
	mirrorReady := v.serviceObserved && len(v.slice) > 0
	wantPages := spec.ErrorPagesEnabled() && !cfg.NoErrorService

	var target *serviceRef // the Middleware's service; nil: no Middleware
	var addrs []netip.Addr // the mirrored slice's addresses; nil: no mirror
	refer := false
	switch {
	case wantPages && cfg.ErrorService.CrossNamespace:
		t := serviceRef{Name: cfg.ErrorService.Name, Namespace: cfg.ErrorService.Namespace, Port: json.RawMessage(itoa(cfg.ErrorService.Port))}
		target = &t
		refer = v.middleware != nil && v.middleware.equal(t)
	case wantPages:
		addrs = v.related.addrs
		if len(addrs) == 0 {
			addrs = v.slice // the last known addresses: never go empty
		}
		if len(addrs) == 0 {
			break // not installed yet: nothing to point at
		}
		t := mirror
		if !mirrorReady && v.middleware != nil {
			// Do not move an observed Middleware to a Service that does
			// not exist yet.
			t = *v.middleware
		}
		target = &t
		refer = v.middleware != nil && v.middleware.equal(t) && (!t.equal(mirror) || mirrorReady)
	}
	if target == nil && v.routeRefers && v.middleware != nil {
		target = v.middleware // the route still refers to it: keep it one more sync
	}
	if addrs == nil && v.middleware != nil && v.middleware.equal(mirror) {
		addrs = v.slice // the observed Middleware still points here: keep them
	}

	var out []any
	if len(addrs) > 0 {
		out = append(out, mirrorService(cfg, name), mirrorSlice(cfg, name, addrs))
	}
	if target != nil {
		out = append(out, middleware(name, *target))
	}
	return append(out, routeChildren(cfg, name, spec, v.routes, refer)...)
}

// mirrorService is the selectorless, headless Service the errors Middleware
// points at. Headless: it needs no ClusterIP of its own and no service-proxy
// rules; Traefik reads its EndpointSlice (its errors Middleware never uses
// the Service's ClusterIP).
func mirrorService(cfg Config, name string) object {
	return object{
		"apiVersion": "v1",
		"kind":       "Service",
		"metadata":   childMeta(errorPagesName(name), name),
		"spec": object{
			"type":      "ClusterIP",
			"clusterIP": "None",
			"ports": []any{object{
				"name":       errorPortName,
				"port":       json.Number(itoa(cfg.ErrorService.Port)),
				"protocol":   "TCP",
				"targetPort": json.Number(itoa(cfg.ErrorService.Port)),
			}},
		},
	}
}

// mirrorSlice is the EndpointSlice of the mirrored Service: one ready
// endpoint per address, all of the first address's family.
func mirrorSlice(cfg Config, name string, addrs []netip.Addr) object {
	md := childMeta(errorPagesName(name), name)
	l := md["labels"].(object)
	l[LabelServiceName] = errorPagesName(name)
	l[LabelSliceManagedBy] = SliceManagedBy
	family := "IPv4"
	if addrs[0].Is6() {
		family = "IPv6"
	}
	var eps []any
	for _, a := range addrs {
		if a.Is6() != addrs[0].Is6() {
			continue
		}
		eps = append(eps, object{"addresses": []any{a.String()}, "conditions": object{"ready": true}})
	}
	return object{
		"apiVersion":  "discovery.k8s.io/v1",
		"kind":        "EndpointSlice",
		"metadata":    md,
		"addressType": family,
		"endpoints":   eps,
		"ports": []any{object{
			"name":     errorPortName,
			"port":     json.Number(itoa(cfg.ErrorService.Port)),
			"protocol": "TCP",
		}},
	}
}

// middleware is the errors Middleware: 5xx answers of the resource's routes
// are replaced by the page its service answers, the status code kept.
func middleware(name string, svc serviceRef) object {
	s := object{"name": svc.Name, "port": svc.Port}
	if svc.Namespace != "" {
		s["namespace"] = svc.Namespace
	}
	return object{
		"apiVersion": "traefik.io/v1alpha1",
		"kind":       "Middleware",
		"metadata":   childMeta(middlewareName(name), name),
		"spec": object{"errors": object{
			"status":  []any{"500-599"},
			"query":   "/_errors/{status}",
			"service": s,
		}},
	}
}
