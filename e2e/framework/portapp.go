//go:build e2e

package framework

// The specs of apps of the test image portapp (e2e/images/portapp), whose
// ports open at once, late, never, or on request.

// PortApp is the spec of an app of the test image: ports as the image's
// args name them (e2e/images/portapp: a port, `port=never`, or
// `port=after:<duration>`), declared as ports (the first public).
func PortApp(args []string, ports ...Obj) Obj {
	ps := make([]any, len(ports))
	for i, p := range ports {
		ps[i] = p
	}
	return Obj{"type": "Service", "image": ImagePortApp, "args": ToAny(args), "ports": ps}
}

// PortArgs are portapp's arguments opening each port as said: "8080",
// "9090=never", "7070=after:20s".
func PortArgs(ports ...string) []string {
	var out []string
	for _, p := range ports {
		out = append(out, "--port", p)
	}
	return out
}

// ToAny is s as the []any a decoded JSON array holds.
func ToAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// PortAppControlPort is the control port the tests give portapp
// (`--control`), which opens and closes its ports on request: undeclared,
// reached from the node (PortControl).
const PortAppControlPort = 8079
