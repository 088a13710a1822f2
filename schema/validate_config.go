package schema

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"
)

// validateConfigRefs checks the ConfigMaps and Secrets envFrom and
// env[].valueFrom name, where the API server would refuse the workload or
// stackdome could not relate them: one source an envFrom entry, a
// DNS-subdomain name, a key for a valueFrom, and rollOnChange only where
// there is content to follow.
func validateConfigRefs(s Spec) []string {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	name := func(field, n string) {
		if n == "" {
			add("%s is required", field)
			return
		}
		for _, msg := range validation.IsDNS1123Subdomain(n) {
			add("%s %q: %s", field, n, msg)
		}
	}
	for i, e := range s.EnvFrom {
		switch {
		case (e.ConfigMapRef == nil) == (e.SecretRef == nil):
			add("spec.envFrom[%d] takes exactly one of configMapRef and secretRef", i)
		case e.ConfigMapRef != nil:
			name(fmt.Sprintf("spec.envFrom[%d].configMapRef.name", i), e.ConfigMapRef.Name)
		default:
			name(fmt.Sprintf("spec.envFrom[%d].secretRef.name", i), e.SecretRef.Name)
		}
	}
	for i, e := range s.Env {
		var cm, sec bool
		if v := e.ValueFrom; v != nil {
			if r := v.ConfigMapKeyRef; r != nil {
				cm = true
				name(fmt.Sprintf("spec.env[%d].valueFrom.configMapKeyRef.name", i), r.Name)
				if r.Key == "" {
					add("spec.env[%d].valueFrom.configMapKeyRef.key is required", i)
				}
			}
			if r := v.SecretKeyRef; r != nil {
				sec = true
				name(fmt.Sprintf("spec.env[%d].valueFrom.secretKeyRef.name", i), r.Name)
				if r.Key == "" {
					add("spec.env[%d].valueFrom.secretKeyRef.key is required", i)
				}
			}
		}
		if e.RollOnChange != nil && !cm && !sec {
			add("spec.env[%d].rollOnChange needs a valueFrom.configMapKeyRef or valueFrom.secretKeyRef: there is no content to follow", i)
		}
	}
	return errs
}
