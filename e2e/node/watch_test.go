//go:build e2e

package node

import (
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

// Forwarders to the watch of writes (framework's watch.go and
// routes_watch.go), under the names the tests were written with.

type (
	event   = framework.WatchEvent
	watcher = framework.Watcher
)

func watchPath(t *testing.T, kind, path string) *watcher {
	t.Helper()
	return framework.NewNodeFixture(t).WatchPath(kind, path)
}

func watchRoutes(t *testing.T, ns string) *framework.RouteWatch {
	t.Helper()
	return framework.NewNodeFixture(t).WatchRoutes(ns)
}
