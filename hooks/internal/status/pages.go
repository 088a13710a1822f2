package status

import (
	"fmt"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// The ErrorPages condition: whether an app that wants the branded error
// pages has them. Its routes keep serving either way (an app without the
// wiring answers its 5xx as it sends them), so the condition never touches
// Available, Converged or Stalled; it exists so that a wiring that cannot
// happen is said out loud instead of hiding behind Serving. The one cause
// stackdome cannot see from inside is a sync request that never carries the
// chart's error-page Service: Metacontroller filters related objects of
// another namespace out of a request to a sync hook at version v1
// (metacontroller/metacontroller@v4.17.2 pkg/controller/composite/api/v1/hooks.go, through
// UniformObjectMap.Convert in pkg/controller/common/api/v2/common.go), and a
// chart installed without error
// pages, or in another namespace than --error-service-namespace, looks the
// same from here.

// pagesCondition decides the ErrorPages condition of the resource name from
// the wiring the request shows; ok is false when the app does not want the
// pages (the status then carries no such condition). It describes what is
// observed: Wired only once the observed IngressRoute refers to the errors
// Middleware and that Middleware is observed, with (in the app's namespace)
// the Service and the address it points at: a new resource's route refers
// to it from its creation (children/wiring.go), whether or not
// Metacontroller could create it.
func pagesCondition(cfg Config, name string, spec schema.Spec, v observed.Wiring) (finding, bool) {
	if !spec.WantsErrorPages() || cfg.NoErrorService {
		return finding{}, false
	}
	ns, svcName := cfg.ErrorService.Namespace, cfg.ErrorService.Name
	svc := ns + "/" + svcName
	if !cfg.ErrorService.CrossNamespace {
		switch {
		case !v.Related.Seen:
			return pagesFinding(false, schema.ReasonErrorServiceNotSeen, fmt.Sprintf(
				"5xx answers reach clients as the app sends them: the sync request carries no Service %s to point the errors Middleware at. "+
					"Check that the stackdome chart is installed in namespace %s with errorPages.enabled=true (kubectl -n %s get service %s), "+
					"and that its CompositeController runs the sync and customize hooks at version v2 "+
					"(kubectl get compositecontrollers -o custom-columns=NAME:.metadata.name,SYNC:.spec.hooks.sync.version,CUSTOMIZE:.spec.hooks.customize.version): "+
					"Metacontroller never sends a sync hook at v1 an object of another namespace",
				svc, ns, ns, svcName)), true
		case len(v.Related.Addrs) == 0 && len(v.Slice) == 0:
			return pagesFinding(false, schema.ReasonErrorServiceNoAddress, fmt.Sprintf(
				"5xx answers reach clients as the app sends them: Service %s has no ClusterIP to put into EndpointSlice %s; "+
					"it must be a ClusterIP Service with an address (kubectl -n %s get service %s -o wide)",
				svc, schema.ErrorPagesName(name), ns, svcName)), true
		}
	}
	if !wired(v) {
		return pagesFinding(false, schema.ReasonWiringPending, "5xx answers reach clients as the app sends them until the wiring is in place: "+
			"the errors Middleware and what it points at are being created, and the route uses them once they exist "+
			"(Traefik disables a route whose Middleware it cannot build)"), true
	}
	return pagesFinding(true, schema.ReasonWired, "5xx answers of this app's routes get the branded pages of Service "+svc+
		" (HTML for browsers, a JSON envelope for API clients), the status code kept"), true
}

// wired says the observed route refers to an observed errors Middleware
// and, when that Middleware points at the mirrored Service of the app's own
// namespace, the Service and an address of its EndpointSlice are observed
// too. One pointing at another namespace's Service (the cross-namespace
// install, or a move from it) is taken as it is: that Service is not in the
// request.
func wired(v observed.Wiring) bool {
	if !v.RouteRefers || v.Middleware == nil {
		return false
	}
	return v.Middleware.Namespace != "" || v.ServiceObserved && len(v.Slice) > 0
}

// pagesFinding is the ErrorPages condition: True when wired.
func pagesFinding(wired bool, reason schema.Reason, message string) finding {
	return finding{schema.CondErrorPages, holds(wired), reason, message}
}
