package observed

import "encoding/json"

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
// either hook version's key.
func (r *Request) relatedIn(group, namespace, name string) bool {
	if r.decoded != nil {
		g := r.decoded.Related[group]
		o, ok := g[namespace+"/"+name]
		if !ok {
			o, ok = g[name]
		}
		return ok && o.Metadata.DeletionTimestamp == nil && (o.Metadata.Namespace == "" || o.Metadata.Namespace == namespace)
	}
	raw, ok := r.raw.Related.Named(group, namespace, name)
	if !ok {
		return false
	}
	var o struct {
		Metadata Meta `json:"metadata"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return true
	}
	return o.Metadata.DeletionTimestamp == nil && (o.Metadata.Namespace == "" || o.Metadata.Namespace == namespace)
}
