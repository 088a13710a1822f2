package children

import (
	"fmt"

	"github.com/stackdome/stackdome/hooks/internal/observed"
)

// KeepRunning rebuilds every observed child from its last-applied
// annotation (given in the order to answer them), so that a spec that
// cannot be turned into children changes nothing that runs: what Sync does
// not return, Metacontroller deletes. Observed objects are never echoed back
// (their server-set fields would make Metacontroller update them on every
// sync). A child without the annotation cannot be rebuilt, and then the sync
// must fail rather than delete it.
func KeepRunning(children []observed.LastApplied) ([]any, error) {
	var out []any
	for _, c := range children {
		g, k, la := c.Group, c.Key, observed.AnnotationLastApplied
		if c.Err != nil {
			return nil, fmt.Errorf("decoding observed %s %q: %w", g, k, c.Err)
		}
		if !c.Found {
			return nil, fmt.Errorf("observed %s %q has no %s annotation to rebuild it from", g, k, la)
		}
		child, err := decodeObject([]byte(c.Config))
		if err != nil {
			return nil, fmt.Errorf("rebuilding observed %s %q from %s: %w", g, k, la, err)
		}
		if child["apiVersion"] == nil || child["kind"] == nil {
			return nil, fmt.Errorf("rebuilding observed %s %q: %s lacks apiVersion or kind", g, k, la)
		}
		out = append(out, child)
	}
	return out, nil
}
