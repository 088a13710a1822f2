//go:build e2e

package node

import (
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

// Forwarders to what the apps own (framework's node_owned.go), under the
// names the tests were written with.

func ownedChildren(t *testing.T, ns, name string) []string {
	t.Helper()
	return framework.NewNodeFixture(t).OwnedChildren(ns, name)
}

func sliceAddresses(t *testing.T, ns, name string) []string {
	t.Helper()
	return framework.NewNodeFixture(t).SliceAddresses(ns, name)
}
