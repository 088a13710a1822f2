//go:build e2e

package framework

// Pods by name and address, and the hooks pods' own count of the syncs
// they answered (stackdome_hook_requests_total), read from the node.

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// PodName is the pod's metadata.name.
func PodName(p Obj) string { s, _ := Dig(p, "metadata", "name").(string); return s }

// PodIP is the pod's status.podIP ("" before it has one).
func PodIP(p Obj) string { s, _ := Dig(p, "status", "podIP").(string); return s }

// SyncsAnswered is the hooks pod's stackdome_hook_requests_total of
// successful syncs, read from its metrics port (the chart's 8081) from
// the node; a failure to read them fails the test.
func (f *NodeFixture) SyncsAnswered(pod Obj) float64 {
	f.t.Helper()
	return f.HookSyncs(pod, "200")
}

// HookSyncs is the hooks pod's stackdome_hook_requests_total of syncs
// answered with code (e.g. "429": held for a dial).
func (f *NodeFixture) HookSyncs(pod Obj, code string) float64 {
	f.t.Helper()
	return f.SyncCodes(pod)[code]
}

// SyncCodes is the hooks pod's stackdome_hook_requests_total{hook="sync"}
// by code, read from its metrics port (the chart's 8081) from the node; a
// failure to read them fails the test.
func (f *NodeFixture) SyncCodes(pod Obj) map[string]float64 {
	t := f.t
	t.Helper()
	out, err := f.ReadSyncCodes(t.Context(), pod)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ReadSyncCodes is SyncCodes, or why the pod's metrics could not be read
// (a pod shutting down, or not listening yet).
func (s *Suite) ReadSyncCodes(ctx context.Context, pod Obj) (map[string]float64, error) {
	body, err := s.GetFromNode(ctx, "http://"+net.JoinHostPort(PodIP(pod), "8081")+"/metrics", "")
	if err != nil {
		return nil, fmt.Errorf("metrics of %s: %w", PodName(pod), err)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "stackdome_hook_requests_total{") || !strings.Contains(line, `hook="sync"`) {
			continue
		}
		_, rest, ok := strings.Cut(line, `code="`)
		code, _, ok2 := strings.Cut(rest, `"`)
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if !ok || !ok2 || err != nil {
			return nil, fmt.Errorf("metrics of %s: %q: no code or value (%v)", PodName(pod), line, err)
		}
		out[code] += v
	}
	return out, nil
}

// HooksAnswered is the syncs the release's hooks pods answered, summed.
func (f *NodeFixture) HooksAnswered(rel *Release) float64 {
	t := f.t
	t.Helper()
	var n float64
	for _, p := range rel.Pods(t, "controller") {
		n += f.SyncsAnswered(p)
	}
	return n
}
