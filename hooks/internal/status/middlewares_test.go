package status

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// TestMiddlewaresCondition: there only when the spec names Middlewares for
// a public route; True once every one exists; False naming each missing
// one, in the spec's order, whatever order the request relates them in.
func TestMiddlewaresCondition(t *testing.T) {
	public := []schema.Port{{Name: "http", Port: 80, Public: true}}
	mws := []schema.MiddlewareRef{{Name: "auth"}, {Name: "limit"}, {Name: "headers"}}
	type result struct {
		Finding finding
		OK      bool
	}
	for name, tc := range map[string]struct {
		spec     schema.Spec
		observed []string
		want     result
	}{
		"none named":     {spec: schema.Spec{Ports: public}},
		"no public port": {spec: schema.Spec{Middlewares: mws, Ports: []schema.Port{{Name: "http", Port: 80}}}},
		"all there": {spec: schema.Spec{Middlewares: mws, Ports: public}, observed: []string{"auth", "limit", "headers"},
			want: result{OK: true, Finding: finding{typ: schema.CondMiddlewares, status: metav1.ConditionTrue, reason: schema.ReasonMiddlewaresAttached,
				message: `every public route uses Middleware "auth", "limit", "headers" of namespace shop, in this order, before stackdome's own`}}},
		"two missing": {spec: schema.Spec{Middlewares: mws, Ports: public}, observed: []string{"limit"},
			want: result{OK: true, Finding: finding{typ: schema.CondMiddlewares, status: metav1.ConditionFalse, reason: schema.ReasonMiddlewareNotFound,
				message: `the routes serve without Middleware "auth", "headers": not found in namespace shop. ` +
					"Traefik disables a route that refers to a Middleware it cannot find, so stackdome attaches each once it exists; " +
					"create it (kubectl -n shop get middlewares.traefik.io) or remove it from spec.middlewares"}}},
	} {
		t.Run(name, func(t *testing.T) {
			var got result
			got.Finding, got.OK = middlewaresCondition("shop", tc.spec, observed.Wiring{Routes: observed.Routes{Middlewares: tc.observed}})
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(finding{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
