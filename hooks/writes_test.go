package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// TestScenarioWrites counts Metacontroller's status writes over the
// scenarios that list the facts a user sees change ("writes"): Metacontroller
// v4.17.2 writes the parent's status whenever a sync's answer differs from
// the status it observed, so every step whose answer is not the status it
// was given is one write (the first step's given status is the empty one of
// a new object). A fleet of apps pays those writes at Metacontroller's
// client rate (--client-go-qps=5 by default), so no more writes than facts
// may be made.
func TestScenarioWrites(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "scenarios", "*.json"))
	require.NoError(t, err)
	var n int
	for _, path := range paths {
		if strings.HasSuffix(path, ".golden.json") {
			continue
		}
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		var sc scenario
		require.NoError(t, json.Unmarshal(b, &sc))
		if len(sc.Writes) == 0 {
			continue
		}
		n++
		t.Run(strings.TrimSuffix(filepath.Base(path), ".json"), func(t *testing.T) {
			writes := statusWrites(t, runScenario(t, sc))
			t.Logf("%d status writes for %d facts", len(writes), len(sc.Writes))
			if len(writes) > len(sc.Writes) {
				t.Errorf("%d status writes for %d facts %q; each write and what it changed:\n%s", len(writes), len(sc.Writes), sc.Writes, strings.Join(writes, "\n"))
			}
		})
	}
	require.GreaterOrEqual(t, n, 2)
}

// statusWrites are Metacontroller's status writes over steps, each with
// what it changed: one for every step whose answer is not the status it was
// given (the first step's given status is the empty one of a new object).
func statusWrites(t *testing.T, steps []goldenStep) []string {
	var given any = map[string]any{}
	var writes []string
	for _, st := range steps {
		if st.Held != "" {
			continue // a 429: Metacontroller writes nothing
		}
		answered := roundTrip(t, st.Response.Status)
		if diff := cmp.Diff(given, any(answered)); diff != "" {
			writes = append(writes, st.At+" ("+st.Note+"):\n"+diff)
		}
		given = answered
	}
	return writes
}
