package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/schema"
)

// lastApplied is Metacontroller's annotation holding, on every child it
// applied with its default dynamic-apply strategy, the exact JSON the hook
// last returned.
const lastApplied = "metacontroller.k8s.io/last-applied-configuration"

// keepRunning rebuilds every observed child from its last-applied annotation,
// so that a spec that cannot be turned into children changes nothing that
// runs: what Sync does not return, Metacontroller deletes. Observed objects
// are never echoed back (their server-set fields would make Metacontroller
// update them on every sync). A child without the annotation cannot be
// rebuilt, and then the sync must fail rather than delete it.
func keepRunning(children metacontroller.Objects) ([]any, error) {
	var groups []string
	for g := range children {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	var out []any
	for _, g := range groups {
		var keys []string
		for k := range children[g] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			var obj struct {
				Metadata struct {
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(children[g][k], &obj); err != nil {
				return nil, fmt.Errorf("decoding observed %s %q: %w", g, k, err)
			}
			la, ok := obj.Metadata.Annotations[lastApplied]
			if !ok {
				return nil, fmt.Errorf("observed %s %q has no %s annotation to rebuild it from", g, k, lastApplied)
			}
			child, err := decodeObject([]byte(la))
			if err != nil {
				return nil, fmt.Errorf("rebuilding observed %s %q from %s: %w", g, k, lastApplied, err)
			}
			if child["apiVersion"] == nil || child["kind"] == nil {
				return nil, fmt.Errorf("rebuilding observed %s %q: %s lacks apiVersion or kind", g, k, lastApplied)
			}
			out = append(out, child)
		}
	}
	return out, nil
}

// invalidStatus is the spec-invalid row: Stalled and Converged False with
// the reason, and everything else as it was — the running app is untouched,
// so its Available condition, revision, window and details still describe it.
func invalidStatus(p *parent, err error, now metav1.Time) schema.Status {
	st := p.Status
	st.ObservedGeneration = p.Metadata.Generation
	prevAvailable := find(st.Conditions, schema.CondAvailable)
	v := verdict{
		available: prevAvailable != nil && prevAvailable.Status == metav1.ConditionTrue,
		stalled:   true, reason: schema.ReasonInvalidSpec, message: err.Error(),
	}
	cs := conditions(v, st.Conditions, p.Metadata.Generation, now)
	if prevAvailable != nil {
		cs[0] = *prevAvailable
	}
	if pages := find(st.Conditions, schema.CondErrorPages); pages != nil {
		cs = append(cs, *pages) // the running routes are untouched too
	}
	st.Conditions = cs
	return st
}

// decodeObject decodes a JSON object keeping integers as integers.
func decodeObject(b []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m object
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("not an object")
	}
	return m, nil
}
