//go:build e2e

package node

import (
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// Forwarders to what stackdome writes for its apps (framework's
// app_writes.go), under the names the tests were written with.

func watchAppWrites(t *testing.T, ns string) []*framework.Watcher {
	t.Helper()
	return framework.NewNodeFixture(t).WatchAppWrites(ns)
}

func requireUnwritten(t *testing.T, phase string, ws []*framework.Watcher, rv uint64, resync time.Duration, hooks []obj) uint64 {
	t.Helper()
	return framework.NewNodeFixture(t).RequireUnwritten(phase, ws, rv, resync, hooks)
}

func requireChildrenKept(t *testing.T, phase string, ws []*framework.Watcher, from, to uint64) {
	t.Helper()
	framework.RequireChildrenKept(t, phase, ws, from, to)
}

func nodeWrites(events []framework.WatchEvent, counted func(framework.WatchEvent) bool) framework.AppWrites {
	return framework.NodeWrites(events, counted)
}

func readyPods(t *testing.T, rel *framework.Release, component string) []obj {
	t.Helper()
	return rel.ReadyPods(t, component)
}
