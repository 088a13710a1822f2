package mcrequest

import "github.com/stackdome/stackdome/schema"

// Reading the hook's answers, which a stand-in sends back as observed
// children: each desired child as an Object, found by kind, and the
// revision a workload's pods are made from.

// Objects returns each of children (a sync answer's, typed or not) as an
// Object, in order (ToObject).
func Objects(children []any) []Object {
	out := make([]Object, len(children))
	for i, c := range children {
		out[i] = ToObject(c)
	}
	return out
}

// Find returns the first of objs whose kind is one of kinds, nil when none
// is.
func Find(objs []Object, kinds ...string) Object {
	for _, o := range objs {
		for _, k := range kinds {
			if Str(o, "kind") == k {
				return o
			}
		}
	}
	return nil
}

// KindName is o as "Kind/name", how kubectl and the status name a child.
func KindName(o Object) string { return Str(o, "kind") + "/" + Name(o) }

// PodTemplate returns the pod template of a workload: a Deployment's,
// StatefulSet's or Job's spec.template, a CronJob's
// spec.jobTemplate.spec.template; nil when o has none.
func PodTemplate(o Object) map[string]any {
	spec, _ := o["spec"].(map[string]any)
	if jt, ok := spec["jobTemplate"].(map[string]any); ok {
		spec, _ = jt["spec"].(map[string]any)
	}
	t, _ := spec["template"].(map[string]any)
	return t
}

// Revision is the stackdome revision a workload's pods are made from: its
// pod template's schema.AnnotationRevision; "" for none (or o nil).
func Revision(o Object) string {
	return Str(PodTemplate(o), "metadata", "annotations", schema.AnnotationRevision)
}

// Container returns the container named name of a workload's pod template
// (PodTemplate), nil when it has none of that name. Changing it changes o.
func Container(o Object, name string) map[string]any {
	containers, _ := Lookup(PodTemplate(o), "spec")["containers"].([]any)
	for _, c := range containers {
		if m, ok := c.(map[string]any); ok && m["name"] == name {
			return m
		}
	}
	return nil
}
