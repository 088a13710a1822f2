package observed

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/stackdome/stackdome/schema"
)

// Wiring is what a sync request tells about the error wiring and the
// routing helpers (children/wiring.go and children/routes.go say what is
// built from it).
type Wiring struct {
	// Related is the chart's error-page Service as the request relates it.
	Related RelatedService
	// Slice holds the addresses of the observed mirrored EndpointSlice.
	Slice []netip.Addr
	// SliceObserved says the mirrored EndpointSlice exists, with addresses
	// or not.
	SliceObserved bool
	// ServiceObserved says the mirrored Service exists.
	ServiceObserved bool
	// Middleware is the observed errors Middleware's service; nil when no
	// Middleware is observed or its service cannot be read.
	Middleware *ServiceRef
	// MiddlewareObserved says the errors Middleware exists, readable or not.
	MiddlewareObserved bool
	// RouteObserved says the IngressRoute exists.
	RouteObserved bool
	// RouteRefers says the observed IngressRoute refers to the Middleware.
	RouteRefers bool
	// First says the parent is Unanswered: the first sync of a new resource.
	First bool
	// SettleOpen says a child the answer returns that the request does not
	// show would still be awaited, not yet called refused: the absence, if
	// there is one, is timed from the parent's status (childrenMissingSince)
	// or from now, and is younger than the settle window. The status decides
	// it (status.SettleOpen); the pipeline sets it after Observe, so that the
	// routes and the status call a child refused at the same sync.
	SettleOpen bool
	// Routes is what the observed routing helpers say.
	Routes Routes
}

// Routes is what a sync request tells about the routing helpers.
type Routes struct {
	Strip          []string // the observed stripPrefix Middleware's prefixes; nil: none observed
	HTTPSObserved  bool     // the redirectScheme Middleware exists
	RouteStrips    bool     // the observed IngressRoute uses the stripPrefix Middleware
	RedirectRefers bool     // the observed redirect IngressRoute uses the redirectScheme Middleware
	// Middlewares are the spec's own Middlewares (spec.middlewares) that the
	// request relates, i.e. that exist, in the spec's order.
	Middlewares []string
}

// RelatedService is what a sync request tells of the chart's error-page
// Service: whether it carries it at all, and its ClusterIP when it has a
// usable one. A request without it is the wiring's blind spot — a sync hook
// at version v1, a chart without error pages, another release's namespace —
// and status says so (the ErrorPages condition).
type RelatedService struct {
	Seen  bool
	Addrs []netip.Addr
}

// relatedServiceOf reads the chart's error-page Service found under a
// related key. Metacontroller keys a related object by name (sync hook v1)
// or namespace/name (v2); an object that says it lives in another namespace
// than svc's is not that Service.
func relatedServiceOf(md Meta, spec ServiceSpec, svc ErrorService) RelatedService {
	if md.Namespace != "" && md.Namespace != svc.Namespace {
		return RelatedService{}
	}
	return RelatedService{Seen: true, Addrs: spec.clusterIP()}
}

// Key is v as a string: two views with the same key give the same children.
func (v Wiring) Key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%t,", v.Related.Seen)
	for _, a := range v.Related.Addrs {
		b.WriteString(a.String())
		b.WriteByte(',')
	}
	b.WriteByte('|')
	for _, a := range v.Slice {
		b.WriteString(a.String())
		b.WriteByte(',')
	}
	fmt.Fprintf(&b, "|%t|%t|%t|%t|%t|%t|%t|", v.SliceObserved, v.ServiceObserved, v.MiddlewareObserved, v.RouteObserved, v.RouteRefers, v.First, v.SettleOpen)
	if m := v.Middleware; m != nil {
		fmt.Fprintf(&b, "%q/%q/%s", m.Namespace, m.Name, m.Port)
	}
	r := v.Routes
	fmt.Fprintf(&b, "|%q|%t|%t|%t|%t|%q", r.Strip, r.Strip != nil, r.HTTPSObserved, r.RouteStrips, r.RedirectRefers, r.Middlewares)
	return b.String()
}

// viewWiring reads the wiring from the observed children (each looked up by
// child; one that does not decode reads as missing) and the related
// error-page Service.
func viewWiring(name, namespace string, child func(group, name string) *Child, related RelatedService) Wiring {
	v := Wiring{Related: related}
	if s := child(groupEndpointSlice, schema.ErrorPagesName(name)); s != nil {
		v.Slice = s.sliceAddresses()
		v.SliceObserved = true
	}
	v.ServiceObserved = child(groupService, schema.ErrorPagesName(name)) != nil
	if m := child(groupMiddleware, schema.MiddlewareName(name)); m != nil {
		v.Middleware = m.errorsService()
		v.MiddlewareObserved = true
	}
	if r := child(groupIngressRoute, name); r != nil {
		r.Metadata.Namespace = namespace
		v.RouteObserved = true
		v.RouteRefers = r.refersTo(schema.MiddlewareName(name))
		v.Routes.RouteStrips = r.refersTo(schema.StripName(name))
	}
	if m := child(groupMiddleware, schema.StripName(name)); m != nil && m.Spec.StripPrefix != nil && len(m.Spec.StripPrefix.Prefixes) > 0 {
		v.Routes.Strip = m.Spec.StripPrefix.Prefixes
	}
	v.Routes.HTTPSObserved = child(groupMiddleware, schema.HTTPSName(name)) != nil
	if r := child(groupIngressRoute, schema.RedirectName(name)); r != nil {
		r.Metadata.Namespace = namespace
		v.Routes.RedirectRefers = r.refersTo(schema.HTTPSName(name))
	}
	return v
}
