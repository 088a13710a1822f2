//go:build e2e

package framework

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// The log of hook exchanges the cluster network relayed: what the tests read
// back of Metacontroller's calls.

func (n *clusterNet) record(ex HookExchange) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.exchanges = append(n.exchanges, ex)
	if dir := os.Getenv("STACKDOME_E2E_REQUESTS"); dir != "" && ex.Request != nil && ex.path == "/sync" {
		// What the real Metacontroller sent, one file a sync, in order:
		// <seq>-<namespace>-<name>-sync-<hook version>.json.
		cc, _ := Dig(ex.Request, "controller").(map[string]any)
		version := HookVersion(cc, "sync")
		b, _ := json.MarshalIndent(ex.Request, "", "  ")
		if os.MkdirAll(dir, 0o755) == nil {
			file := fmt.Sprintf("%05d-%s-%s-sync-%s.json", len(n.exchanges), ex.parentNS, ex.parentName, version)
			_ = os.WriteFile(filepath.Join(dir, file), append(b, '\n'), 0o644)
		}
	}
}

// Drain returns the exchanges recorded so far and forgets them, so that a
// long run (the fleet) holds no more than a second's requests.
func (n *clusterNet) Drain() []HookExchange {
	n.mu.Lock()
	defer n.mu.Unlock()
	ex := n.exchanges
	n.exchanges = nil
	return ex
}

// Path is the hook's path of the exchange (/sync, /customize ...).
func (e HookExchange) Path() string { return e.path }

// Count is the number of exchanges on path.
func (n *clusterNet) Count(path string) int {
	n.mu.Lock()
	defer n.mu.Unlock()
	c := 0
	for _, ex := range n.exchanges {
		if ex.path == path {
			c++
		}
	}
	return c
}

// HookCalls returns the exchanges on path (/sync ...) for parent ns/name
// answered at or after since, oldest first.
func (n *clusterNet) HookCalls(path, ns, name string, since time.Time) []HookExchange {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []HookExchange
	for _, ex := range n.exchanges {
		if ex.path == path && ex.parentNS == ns && ex.parentName == name && !ex.At.Before(since) {
			out = append(out, ex)
		}
	}
	return out
}
