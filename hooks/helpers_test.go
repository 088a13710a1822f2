package hooks

import (
	"os"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/portcheck"
	"github.com/stackdome/stackdome/schema"
)

// object is a child as an answer carries it.
type object = map[string]any

// noVerdicts is the view of a verifier that knows nothing yet.
type noVerdicts struct{}

func (noVerdicts) Get(portcheck.Key) (portcheck.Result, bool) { return portcheck.Result{}, false }
func (noVerdicts) Pending(portcheck.Key) bool                 { return false }

// find returns the condition of type typ in cs, or nil.
func find(cs []metav1.Condition, typ schema.ConditionType) *metav1.Condition {
	for i := range cs {
		if cs[i].Type == string(typ) {
			return &cs[i]
		}
	}
	return nil
}

// verdictReasons are the Available reasons of a status built from a verdict
// (status/evidence.go reads a status the same way).
var verdictReasons = map[string]bool{
	string(schema.ReasonServing): true, string(schema.ReasonPortCheckFailing): true,
	string(schema.ReasonPortsUnverified): true, string(schema.ReasonPortNotListening): true,
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

// golden compares got with the committed file at path, first writing got
// there when rewrite is set; regen says how to rewrite it, for the failure.
func golden(t *testing.T, path string, got []byte, rewrite bool, regen string) {
	t.Helper()
	if rewrite {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, regen)
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs from what the code makes; %s and review the diff (-committed +made):\n%s", path, regen, diff)
	}
}
