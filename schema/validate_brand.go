package schema

import (
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// validateBrand checks spec.errorPages.brand as the CRD does: a DNS label
// (it goes into the errors Middleware's query as it is), and only with the
// pages on.
func validateBrand(s Spec) field.ErrorList {
	e := s.ErrorPages
	if e == nil || e.Brand == "" {
		return nil
	}
	var errs field.ErrorList
	p := field.NewPath("spec", "errorPages", "brand")
	for _, msg := range validation.IsDNS1123Label(e.Brand) {
		errs = append(errs, field.Invalid(p, e.Brand, msg))
	}
	if e.Enabled != nil && !*e.Enabled {
		errs = append(errs, field.Forbidden(p, "needs errorPages.enabled: a brand is drawn only on the branded pages"))
	}
	return errs
}

// messages are errs as Validate's messages.
func messages(errs field.ErrorList) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}
