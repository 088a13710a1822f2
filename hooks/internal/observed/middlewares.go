package observed

// relatedMiddlewares are the team's Middlewares of spec.middlewares that the
// request relates (the customize hook asks for them by name in the
// parent's namespace), in the spec's order: the ones that exist and are
// not being deleted. A related
// object whose key or metadata says another namespace is not one of them;
// one that does not decode still exists, and is attached.
func (r *Request) relatedMiddlewares(namespace string, names []string) []string {
	if len(names) == 0 {
		return nil
	}
	var out []string
	for _, n := range names {
		if r.relatedIn(groupMiddleware, namespace, n) {
			out = append(out, n)
		}
	}
	return out
}

// relatedIn says the related group holds the object namespace/name, under
// either hook version's key, not being deleted and of that namespace; one
// whose metadata does not decode is there.
func (r *Request) relatedIn(group, namespace, name string) bool {
	o, ok := named(r.related[group], namespace, name)
	if !ok {
		return false
	}
	m := struct {
		Metadata Meta `json:"metadata"`
	}{o.v.Metadata}
	if !o.read(&m) {
		return true
	}
	return m.Metadata.DeletionTimestamp == nil && (m.Metadata.Namespace == "" || m.Metadata.Namespace == namespace)
}
