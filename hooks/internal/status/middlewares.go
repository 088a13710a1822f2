package status

import (
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// The Middlewares condition: whether the routes use every Middleware the
// spec names (spec.middlewares). Traefik disables a route that refers to a
// Middleware it cannot find (traefik/traefik@v3.7.13
// pkg/server/middleware/middlewares.go, "middleware %q does not exist"), so the
// routes refer to each only once the request relates it, i.e. it exists; a
// missing one leaves the app serving without it, and this condition says so
// by name instead of a silent wait. Like ErrorPages it never moves
// Available, Converged or Stalled: the app serves, and nothing stackdome
// can do brings the Middleware about — the team creates it, and its
// creation resyncs the resource (the customize hook relates it by name).

// middlewaresCondition decides the Middlewares condition from the spec and
// the Middlewares the request relates; ok is false when the spec names none
// (or has no public route to put them on): the status then carries no such
// condition. The message lists names in the spec's order, so it is the same
// at every sync of the same situation.
func middlewaresCondition(namespace string, spec schema.Spec, v observed.Wiring) (finding, bool) {
	want := spec.MiddlewareNames()
	if len(want) == 0 || len(spec.PublicPorts()) == 0 {
		return finding{}, false
	}
	var missing []string
	for _, n := range want {
		if !slices.Contains(v.Routes.Middlewares, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return finding{schema.CondMiddlewares, metav1.ConditionFalse, schema.ReasonMiddlewareNotFound, fmt.Sprintf(
			"the routes serve without Middleware %s: not found in namespace %s. "+
				"Traefik disables a route that refers to a Middleware it cannot find, so stackdome attaches each once it exists; "+
				"create it (kubectl -n %s get middlewares.traefik.io) or remove it from spec.middlewares",
			quoted(missing), namespace, namespace)}, true
	}
	return finding{schema.CondMiddlewares, metav1.ConditionTrue, schema.ReasonMiddlewaresAttached, fmt.Sprintf(
		"every public route uses Middleware %s of namespace %s, in this order, before stackdome's own", quoted(want), namespace)}, true
}

// quoted is names as "a", "b".
func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}
