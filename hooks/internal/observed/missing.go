package observed

import "github.com/stackdome/stackdome/metacontroller"

// ChildRef names a child the way Metacontroller matches desired children to
// observed ones: by kind and apiVersion (its "Kind.apiVersion" group) and
// name, in the parent's namespace.
type ChildRef struct {
	Kind, APIVersion, Name string
}

// Group is r's group key in a sync request's children.
func (r ChildRef) Group() string { return metacontroller.GroupKey(r.Kind, r.APIVersion) }

// String is r as status messages and kubectl name it: Kind/name.
func (r ChildRef) String() string { return r.Kind + "/" + r.Name }

// Missing returns the children of want, in want's order, that the request
// does not observe in namespace. A child of a group the request carries no
// entry for is never missing: Metacontroller sends a group, empty or not,
// for every childResources rule of the CompositeController, so an absent
// group is a kind it does not watch (an older registration, a hand-made
// request), whose children the request could not show either way. A child
// that is there but does not decode is observed: it exists.
func (r *Request) Missing(namespace string, want []ChildRef) []ChildRef {
	var out []ChildRef
	for _, c := range want {
		if !r.hasGroup(c.Group()) {
			continue
		}
		if !r.has(c.Group(), namespace, c.Name) {
			out = append(out, c)
		}
	}
	return out
}

// has says the request observes the child of group under either hook
// version's key, whether it decodes or not.
func (r *Request) has(group, namespace, name string) bool {
	_, ok := named(r.children[group], namespace, name)
	return ok
}

// hasGroup says the request's children carry an entry for group.
func (r *Request) hasGroup(group string) bool {
	_, ok := r.children[group]
	return ok
}
