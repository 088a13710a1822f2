package status

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// Invalid is the status of the spec-invalid row: Stalled and Converged
// False with the reason, and everything else as it was — the running app is
// untouched (its children are kept as last applied), so its Available
// condition, revision, window, details and ErrorPages, Middlewares and
// Config conditions still describe it. It is held to the status bounds
// (bound.go).
func Invalid(p *observed.Parent, err error, now metav1.Time) schema.Status {
	st := p.Status
	st.ObservedGeneration = p.Metadata.Generation
	prevAvailable := find(st.Conditions, schema.CondAvailable)
	h := health{
		available: prevAvailable != nil && prevAvailable.Status == metav1.ConditionTrue,
		stalled:   true, reason: schema.ReasonInvalidSpec, message: err.Error(),
	}
	cs := stamper{prev: st.Conditions, generation: p.Metadata.Generation, now: now}.health(h)
	if prevAvailable != nil {
		replace(cs, *prevAvailable)
	}
	for _, typ := range []schema.ConditionType{schema.CondErrorPages, schema.CondMiddlewares, schema.CondConfig} {
		if c := find(st.Conditions, typ); c != nil {
			cs = append(cs, *c) // the running routes are untouched too
		}
	}
	st.Conditions = cs
	// st is the request's own status: a forged one may be of any size.
	return bound(st)
}
