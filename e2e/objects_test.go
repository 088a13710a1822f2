//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/stackdome/stackdome/e2e/framework"
)

// Reading the statuses, answers and sets the tests compare.

// condition is the status condition of type typ of resp (a StackResource
// or a sync answer), or nil.
func condition(resp obj, typ string) map[string]any {
	conds, _ := framework.Dig(resp, "status", "conditions").([]any)
	for _, c := range conds {
		if c, ok := c.(map[string]any); ok && c["type"] == typ {
			return c
		}
	}
	return nil
}

func equalSets(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// keys are m's keys, sorted.
func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// mustJSON is v as indented JSON, or as fmt prints it if it has none.
func mustJSON(v any) string {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
