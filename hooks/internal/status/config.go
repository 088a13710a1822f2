package status

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

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
// the status then carries no such condition. A reference of a kind the
// install does not relate (observed.Config.Unwatched) makes it Unknown,
// NotWatched, unless a related one is missing: stackdome cannot tell
// whether it exists, and its content does not roll the pods. The message
// names references in ConfigRefs' order, so it is the same at every sync
// of the same situation; it never holds content.
func configCondition(namespace, name string, spec schema.Spec, c observed.Config) (finding, bool) {
	refs := spec.ConfigRefs()
	if len(refs) == 0 {
		return finding{}, false
	}
	if len(c.Missing) > 0 {
		return finding{schema.CondConfig, metav1.ConditionFalse, schema.ReasonConfigNotFound, fmt.Sprintf(
			"not found: %s. The pods cannot start until each exists: create it, or mark the reference optional",
			refList(namespace, c.Missing))}, true
	}
	if len(c.Unwatched) > 0 {
		var values []string
		for _, k := range []struct{ kind, value string }{{schema.KindConfigMap, "relate.configMaps"}, {schema.KindSecret, "relate.secrets"}} {
			for _, r := range c.Unwatched {
				if r.Kind == k.kind {
					values = append(values, k.value+"=false")
					break
				}
			}
		}
		then := fmt.Sprintf("a change of its content does not roll the pods: after changing it, run kubectl rollout restart %s/%s -n %s",
			strings.ToLower(spec.WorkloadKind()), name, namespace)
		if spec.RunsToCompletion() {
			then = "a change of its content is not tracked: only pods started after it read it"
		}
		return finding{schema.CondConfig, metav1.ConditionUnknown, schema.ReasonNotWatched, fmt.Sprintf("not watched on this install (%s): %s. Whether each exists is not checked, and %s",
			strings.Join(values, ", "), refList(namespace, c.Unwatched), then)}, true
	}
	return finding{schema.CondConfig, metav1.ConditionTrue, schema.ReasonConfigFound, fmt.Sprintf(
		"every ConfigMap and Secret the pods use exists in namespace %s (%d)", namespace, len(refs))}, true
}

// refList names refs as "Kind namespace/name", comma separated.
func refList(namespace string, refs []schema.ConfigRef) string {
	names := make([]string, len(refs))
	for i, r := range refs {
		names[i] = fmt.Sprintf("%s %s/%s", r.Kind, namespace, r.Name)
	}
	return strings.Join(names, ", ")
}
