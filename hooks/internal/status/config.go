package status

import (
	"fmt"
	"strings"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// The Config condition: whether every ConfigMap and Secret the spec uses
// (files, envFrom, env[].valueFrom) and does not mark optional exists. A
// pod that needs a missing one does not start (the kubelet waits for it),
// so without this condition the app would sit in Progressing with no word
// of why; with it, status names kind, namespace and name. Like ErrorPages
// and Middlewares it never moves Available, Converged or Stalled: the pods'
// own state says what happens to them, and the object's creation resyncs
// the resource (the customize hook relates it by name). A missing optional
// reference is not an error.

// configCondition decides the Config condition from the spec and what the
// request relates; ok is false when the spec uses no ConfigMap or Secret:
// the status then carries no such condition. The message names references
// in ConfigRefs' order, so it is the same at every sync of the same
// situation; it never holds content.
func configCondition(namespace string, spec schema.Spec, c observed.Config) (found bool, reason schema.Reason, message string, ok bool) {
	refs := spec.ConfigRefs()
	if len(refs) == 0 {
		return false, "", "", false
	}
	if len(c.Missing) > 0 {
		names := make([]string, len(c.Missing))
		for i, r := range c.Missing {
			names[i] = fmt.Sprintf("%s %s/%s", r.Kind, namespace, r.Name)
		}
		return false, schema.ReasonConfigNotFound, fmt.Sprintf(
			"not found: %s. The pods cannot start until each exists: create it, or mark the reference optional",
			strings.Join(names, ", ")), true
	}
	return true, schema.ReasonConfigFound, fmt.Sprintf(
		"every ConfigMap and Secret the pods use exists in namespace %s (%d)", namespace, len(refs)), true
}
