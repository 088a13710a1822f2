package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/internal/mcrequest"
)

// TestScenarioChildWrites counts Metacontroller's child writes over the
// fleet scenarios, from creation to wired and Converged, run as the real
// cluster runs them with the chart's error pages (runScenarioAs): each
// child is created once and never written again; the public route is
// created referring to its errors Middleware (children/wiring.go). An update of a child
// Metacontroller created a sync before is a write a later sync undid
// (Metacontroller pays it at --client-go-qps, and Traefik rebuilds its
// routers for an IngressRoute or Middleware written twice); a fleet of N
// public apps pays it N times. At the end every public route refers to its
// errors Middleware: the wiring is not traded for the writes; nor are
// status writes (the facts of the scenario, and the error pages wired).
func TestScenarioChildWrites(t *testing.T) {
	type childWrites struct {
		file string
		spec string // replaces the scenario's spec when set
		// lag: children the sync after the first does not show yet
		// (Metacontroller's informers, one per kind, show one answer's
		// children in no fixed order), as Kind/name.
		lag  []string
		want []string
	}
	cases := map[string]childWrites{
		"fleet-private": {file: "fleet-private", want: []string{"Deployment/fleetapp", "Service/fleetapp"}},
		"fleet-public": {file: "fleet-public", want: []string{"Deployment/fleetweb", "EndpointSlice/fleetweb-error-pages",
			"IngressRoute/fleetweb", "Middleware/fleetweb-errors", "Service/fleetweb", "Service/fleetweb-error-pages"}},
	}
	// A public app whose route the next sync sees before one child it
	// refers to: at N=1,000 (docs/performance.md, "Fleet") a route was
	// written three times so, its reference dropped and made again.
	public := cases["fleet-public"]
	for _, lag := range [][]string{
		{"Middleware/fleetweb-errors"},
		{"Service/fleetweb-error-pages"},
		{"EndpointSlice/fleetweb-error-pages"},
		{"Middleware/fleetweb-errors", "Service/fleetweb-error-pages", "EndpointSlice/fleetweb-error-pages"},
		{"IngressRoute/fleetweb"},
	} {
		c := public
		c.lag = lag
		cases["fleet-public, shown a sync late: "+strings.Join(lag, ", ")] = c
	}
	tls := public
	tls.spec = `{"type": "Service", "image": "ghcr.io/acme/web:1.0", "host": "fleetweb.example.com", "tls": {}, "ports": [{"name": "http", "port": 8080, "public": true}]}`
	tls.want = []string{"Deployment/fleetweb", "EndpointSlice/fleetweb-error-pages", "IngressRoute/fleetweb", "IngressRoute/fleetweb-redirect",
		"Middleware/fleetweb-errors", "Middleware/fleetweb-https", "Service/fleetweb", "Service/fleetweb-error-pages"}
	cases["fleet-public with tls"] = tls
	tls.lag = []string{"Middleware/fleetweb-https"}
	cases["fleet-public with tls, shown a sync late: Middleware/fleetweb-https"] = tls
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "testdata", "scenarios", tc.file+".json"))
			require.NoError(t, err)
			var sc scenario
			require.NoError(t, json.Unmarshal(b, &sc))
			if tc.spec != "" {
				sc.Spec = json.RawMessage(tc.spec)
			}
			sc.Steps[1].Lagging = tc.lag
			want := tc.want
			steps, writes := runScenarioAs(t, sc, true)

			var got []string
			for kn, ws := range writes {
				got = append(got, kn)
				if len(ws) != 1 || !strings.HasPrefix(ws[0], "created ") {
					t.Errorf("%s: %d writes, want one create:\n%s", kn, len(ws), strings.Join(ws, "\n"))
				}
			}
			slices.Sort(got)
			require.Equal(t, want, got, "the children written")
			t.Logf("%d child writes: %v", len(got), got)

			// The status writes stay those of the facts, and one more for
			// a public app: its error pages wired (the ErrorPages
			// condition), a fact of its own.
			facts := len(sc.Writes)
			if strings.Contains(name, "public") {
				facts++
			}
			if sw := statusWrites(t, steps); len(sw) > facts {
				t.Errorf("%d status writes for %d facts; each write and what it changed:\n%s", len(sw), facts, strings.Join(sw, "\n"))
			}

			last := steps[len(steps)-1].Response
			for _, route := range mcrequest.Objects(last.Children) {
				if route["kind"] != "IngressRoute" || mcrequest.KindName(route) != "IngressRoute/"+sc.Name {
					continue // the app's route; the TLS redirect one only redirects
				}
				routes, _ := mcrequest.Lookup(route, "spec")["routes"].([]any)
				for _, r := range routes {
					if !strings.Contains(mustJSONString(t, r), `"`+sc.Name+`-errors"`) {
						t.Errorf("the converged route does not refer to its errors Middleware: %s", mustJSONString(t, r))
					}
				}
			}
		})
	}
}

func mustJSONString(t testing.TB, v any) string { return string(mustJSON(t, v)) }
