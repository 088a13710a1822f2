package schema

// The suffixes of the Middlewares stackdome makes for a resource <name>: a
// spec.middlewares entry may not name one of them, or the team's Middleware
// and stackdome's child would be one object.
var ownMiddlewareSuffixes = []string{"-errors", "-strip", "-https"}

// MiddlewareNames are the names of spec.middlewares, in order.
func (s Spec) MiddlewareNames() []string {
	out := make([]string, len(s.Middlewares))
	for i, m := range s.Middlewares {
		out[i] = m.Name
	}
	return out
}
