package children

import "github.com/stackdome/stackdome/hooks/internal/observed"

// Refs names each child of objs (as Build and Routing return them: objects
// with apiVersion, kind and metadata.name) the way Metacontroller matches
// it against the observed children, in objs' order.
func Refs(objs []any) []observed.ChildRef {
	out := make([]observed.ChildRef, 0, len(objs))
	for _, o := range objs {
		m, _ := o.(object)
		md, _ := m["metadata"].(object)
		kind, _ := m["kind"].(string)
		apiVersion, _ := m["apiVersion"].(string)
		name, _ := md["name"].(string)
		out = append(out, observed.ChildRef{Kind: kind, APIVersion: apiVersion, Name: name})
	}
	return out
}
