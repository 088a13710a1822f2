//go:build e2e

package framework

// An app whose dead ports the gate must condemn, and the status that does.

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// GateApp is an app with ports that never listen (TestGateCondemnsDeadPorts,
// TestReplicasAgreeOnRealNode): its declared ports by name, and which of
// them portapp never opens.
type GateApp struct {
	Name  string
	Spec  Obj
	Ports map[string]int // port name → number
	Dead  []string       // port names portapp never opens
}

// Condemned says how sr's status differs from the condemnation of a's dead
// ports (nil: it is the condemnation).
func (a *GateApp) Condemned(sr Obj) error {
	if sr == nil {
		return errors.New("no StackResource")
	}
	var errs []error
	want := map[string][2]any{
		"Available": {"False", "PortNotListening"},
		"Stalled":   {"True", "PortNotListening"},
		"Converged": {"False", nil},
	}
	for _, typ := range []string{"Available", "Stalled", "Converged"} {
		c := SRCondition(sr, typ)
		w := want[typ]
		if c == nil || c["status"] != w[0] || (w[1] != nil && c["reason"] != w[1]) {
			errs = append(errs, fmt.Errorf("%s = %v, want %v %v", typ, c, w[0], w[1]))
		}
	}
	deadNumbers := map[string]int{} // port number → readiness_failure details naming it
	for _, pn := range a.Dead {
		deadNumbers[strconv.Itoa(a.Ports[pn])] = 0
	}
	for _, d := range ToSlice(Dig(sr, "status", "lastFailureDetails")) {
		port := fmt.Sprint(Dig(d, "port"))
		if Dig(d, "type") != "readiness_failure" {
			errs = append(errs, fmt.Errorf("a failure detail of type %v, want only readiness_failure: %v", Dig(d, "type"), d))
			continue
		}
		if _, ok := deadNumbers[port]; !ok {
			errs = append(errs, fmt.Errorf("a readiness_failure for port %s, not a dead port: %v", port, d))
			continue
		}
		deadNumbers[port]++
	}
	for port, n := range deadNumbers {
		if n != 1 {
			errs = append(errs, fmt.Errorf("%d readiness_failure details for dead port %s, want 1", n, port))
		}
	}
	states := PortStates(sr)
	for pn := range a.Ports {
		want := "Open"
		if slices.Contains(a.Dead, pn) {
			want = "Closed"
		}
		if states[pn] != want {
			errs = append(errs, fmt.Errorf("status.ports %s is %q, want %s", pn, states[pn], want))
		}
	}
	if len(states) != len(a.Ports) {
		errs = append(errs, fmt.Errorf("status.ports %v, want the %d declared ports", states, len(a.Ports)))
	}
	return errors.Join(errs...)
}
