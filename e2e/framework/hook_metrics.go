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

// The metrics ports the tests read: the chart's hooks pods', and
// Metacontroller's --metrics-address (:9999 by default, which its
// production manifests keep).
const (
	HooksMetricsPort = "8081"
	MCMetricsPort    = "9999"
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
	_, syncs, err := s.readMetrics(ctx, PodIP(pod), HooksMetricsPort)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", PodName(pod), err)
	}
	return syncs, nil
}

// readMetrics reads, from http://ip:port/metrics on the node, every
// unlabeled sample by name, and stackdome_hook_requests_total{hook="sync"}
// summed by code (syncs); a sync line without a code or a value is an
// error.
func (s *Suite) readMetrics(ctx context.Context, ip, port string) (samples, syncs map[string]float64, err error) {
	body, err := s.GetFromNode(ctx, "http://"+net.JoinHostPort(ip, port)+"/metrics", "")
	if err != nil {
		return nil, nil, fmt.Errorf("metrics of %s: %w", ip, err)
	}
	samples, syncs = map[string]float64{}, map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) < 2 || strings.HasPrefix(line, "#") {
			continue
		}
		v, verr := strconv.ParseFloat(fields[len(fields)-1], 64)
		switch {
		case strings.HasPrefix(line, "stackdome_hook_requests_total{") && strings.Contains(line, `hook="sync"`):
			_, rest, ok := strings.Cut(line, `code="`)
			code, _, ok2 := strings.Cut(rest, `"`)
			if !ok || !ok2 || verr != nil {
				return nil, nil, fmt.Errorf("metrics of %s: %q: no code or value (%v)", ip, line, verr)
			}
			syncs[code] += v
		case verr == nil && !strings.Contains(fields[0], "{"):
			samples[fields[0]] = v
		}
	}
	return samples, syncs, sc.Err()
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
