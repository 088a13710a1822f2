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
	for name, tc := range map[string]struct {
		file string
		spec string // replaces the scenario's spec when set
		want []string
	}{
		"fleet-private": {file: "fleet-private", want: []string{"Deployment/fleetapp", "Service/fleetapp"}},
		"fleet-public": {file: "fleet-public", want: []string{"Deployment/fleetweb", "EndpointSlice/fleetweb-error-pages",
			"IngressRoute/fleetweb", "Middleware/fleetweb-errors", "Service/fleetweb", "Service/fleetweb-error-pages"}},
	} {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "testdata", "scenarios", tc.file+".json"))
			require.NoError(t, err)
			var sc scenario
			require.NoError(t, json.Unmarshal(b, &sc))
			if tc.spec != "" {
				sc.Spec = json.RawMessage(tc.spec)
			}
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
				if route["kind"] != "IngressRoute" {
					continue
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
