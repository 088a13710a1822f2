package schema

// MiddlewareNames are the names of spec.middlewares, in order.
func (s Spec) MiddlewareNames() []string {
	out := make([]string, len(s.Middlewares))
	for i, m := range s.Middlewares {
		out[i] = m.Name
	}
	return out
}
