//go:build e2e

package node

import (
	"github.com/stackdome/stackdome/e2e/framework"
)

// Forwarders to the platform's one setup (framework's node_platform.go),
// under the names the tests were written with.

// portapp is the spec of an app of the test image: ports as the image's
// args name them (e2e/images/portapp: a port, `port=never`, or
// `port=after:<duration>`), declared as ports (the first public).
func portapp(args []string, ports ...obj) obj {
	ps := make([]any, len(ports))
	for i, p := range ports {
		ps[i] = p
	}
	return obj{"type": "Service", "image": framework.ImagePortApp, "args": toAny(args), "ports": ps}
}

// portArgs are portapp's arguments opening each port as said: "8080",
// "9090=never", "7070=after:20s".
func portArgs(ports ...string) []string {
	var out []string
	for _, p := range ports {
		out = append(out, "--port", p)
	}
	return out
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
