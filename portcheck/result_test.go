package portcheck

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResult(t *testing.T) {
	var (
		http    = PortResult{Name: "http", Port: 8080, State: Open}
		metrics = PortResult{Name: "metrics", Port: 9090, State: Closed, Err: "connect: connection refused"}
		admin   = PortResult{Port: 9901, State: Closed, Err: "connect: connection refused"}
		grpc    = PortResult{Name: "grpc", Port: 9000, State: Inconclusive, Err: "i/o timeout"}
	)
	tests := map[string]struct {
		ports       []PortResult
		wantAllOpen bool
		wantClosed  []PortResult
		wantMessage string
	}{
		"all open":         {[]PortResult{http}, true, nil, "port 8080 (http) open"},
		"no ports":         {nil, true, nil, "no ports declared"},
		"one closed":       {[]PortResult{http, metrics}, false, []PortResult{metrics}, "port 9090 (metrics) refused connection"},
		"two closed":       {[]PortResult{metrics, http, admin}, false, []PortResult{metrics, admin}, "ports 9090 (metrics), 9901 refused connection"},
		"closed wins":      {[]PortResult{grpc, metrics}, false, []PortResult{metrics}, "port 9090 (metrics) refused connection"},
		"inconclusive":     {[]PortResult{http, grpc}, false, nil, "port 9000 (grpc) inconclusive: i/o timeout"},
		"two inconclusive": {[]PortResult{grpc, {Port: 1, State: Inconclusive, Err: "reset"}}, false, nil, "port 9000 (grpc) inconclusive: i/o timeout; port 1 inconclusive: reset"},
		"two open":         {[]PortResult{http, {Name: "web", Port: 80, State: Open}}, true, nil, "ports 8080 (http), 80 (web) open"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := Result{IP: "10.0.0.1", Ports: tc.ports}
			type view struct {
				AllOpen bool
				Closed  []PortResult
				Message string
			}
			want := view{tc.wantAllOpen, tc.wantClosed, tc.wantMessage}
			got := view{r.AllOpen(), r.ClosedPorts(), r.Message()}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
