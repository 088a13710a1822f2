package hooks

import (
	"fmt"
	"strings"

	"github.com/stackdome/stackdome/portcheck"
	"github.com/stackdome/stackdome/schema"
)

// key is the verifier key of the workload revision: a verdict on pods of
// another ReplicaSet or ControllerRevision is never read.
func (f *facts) key() portcheck.Key {
	return portcheck.Key{Namespace: f.namespace, Name: f.name, Revision: f.wrev}
}

// dial returns the job that dials every declared port of the pod, or none
// while a dial for the key is already pending. Either way an answer can
// arrive, so the caller asks to be called back.
func (f *facts) dial(rep *pod, forget bool) []DialJob {
	if f.verdicts.Pending(f.key()) {
		return nil
	}
	ports := make([]portcheck.Port, len(f.spec.Ports))
	for i, p := range f.spec.Ports {
		ports[i] = portcheck.Port{Name: p.Name, Port: p.Port}
	}
	return []DialJob{{Job: portcheck.Job{Key: f.key(), IP: rep.Status.PodIP, Ports: ports}, Forget: forget}}
}

// portsOf is the per-port table a verdict gives: its state and, when not
// Open, what the dial saw (so that the table read back is the same verdict).
func portsOf(res portcheck.Result) []schema.PortStatus {
	out := make([]schema.PortStatus, 0, len(res.Ports))
	for _, p := range res.Ports {
		ps := schema.PortStatus{Name: p.Name, Port: p.Port, State: schema.PortUnknown}
		switch p.State {
		case portcheck.Open:
			ps.State = schema.PortOpen
		case portcheck.Closed:
			ps.State = schema.PortClosed
		}
		if p.State != portcheck.Open {
			ps.Message = clip(p.Err)
		}
		out = append(out, ps)
	}
	return out
}

// portTable is the per-port status: one row per declared port, in order,
// with its state from known (by number), Unknown when known lacks it.
func portTable(declared []schema.Port, known []schema.PortStatus) []schema.PortStatus {
	byPort := map[int32]schema.PortStatus{}
	for _, p := range known {
		byPort[p.Port] = p
	}
	out := make([]schema.PortStatus, 0, len(declared))
	for _, p := range declared {
		ps := schema.PortStatus{Name: p.Name, Port: p.Port, State: schema.PortUnknown}
		if k, ok := byPort[p.Port]; ok {
			ps.State, ps.Message = k.State, k.Message
		}
		out = append(out, ps)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// portFailures is one readiness_failure detail per refused port.
func portFailures(closed []portcheck.PortResult, podName, rev string) []schema.FailureDetail {
	out := make([]schema.FailureDetail, 0, len(closed))
	for _, p := range closed {
		out = append(out, schema.FailureDetail{
			Type: schema.ReadinessFailure, Reason: string(schema.ReasonPortNotListening), Container: schema.ContainerName, Port: p.Port, Revision: rev,
			Message: fmt.Sprintf("port %d (%s) refused connection on pod %s: nothing listens there", p.Port, p.Name, podName),
		})
	}
	return out
}

// portList renders "port 80 (http)" or "ports 80 (http), 9090 (metrics)".
func portList(ps []schema.Port) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = fmt.Sprintf("%d (%s)", p.Port, p.Name)
	}
	if len(parts) == 1 {
		return "port " + parts[0]
	}
	return "ports " + strings.Join(parts, ", ")
}
