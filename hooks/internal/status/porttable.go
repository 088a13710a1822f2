package status

import (
	"github.com/stackdome/stackdome/portcheck"
	"github.com/stackdome/stackdome/schema"
)

// The port table of the status: each declared port's state as the last
// verdict saw it. A verdict becomes a table (portsOf), and the status's
// table is read back as the verdict it was built from (carry, evidence.go),
// through the one mapping of states below: the round trip is lossless.

// tableState is a dial's state as the table says it.
func tableState(s portcheck.State) schema.PortState {
	switch s {
	case portcheck.Open:
		return schema.PortOpen
	case portcheck.Closed:
		return schema.PortClosed
	}
	return schema.PortUnknown
}

// dialState is a table's state as a dial's: Unknown is Inconclusive.
func dialState(s schema.PortState) portcheck.State {
	switch s {
	case schema.PortOpen:
		return portcheck.Open
	case schema.PortClosed:
		return portcheck.Closed
	}
	return portcheck.Inconclusive
}

// portsOf is the per-port table a verdict gives: its state and, when not
// Open, what the dial saw (so that the table read back is the same verdict).
func portsOf(res portcheck.Result) []schema.PortStatus {
	out := make([]schema.PortStatus, 0, len(res.Ports))
	for _, p := range res.Ports {
		ps := schema.PortStatus{Name: p.Name, Port: p.Port, State: tableState(p.State)}
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
