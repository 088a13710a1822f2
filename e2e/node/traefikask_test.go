//go:build e2e

package node

import (
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

// Forwarders to asking Traefik from the node (framework's traefik_ask.go),
// under the names the tests were written with.

type reply = framework.TraefikReply

func servedBy(r reply, port int, host, path string) error {
	return framework.ServedBy(r, port, host, path)
}

func waitServed(t *testing.T, ep, host, path string, port int, reached string) {
	t.Helper()
	framework.NewNodeFixture(t).WaitServed(ep, host, path, port, reached)
}
