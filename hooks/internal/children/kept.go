package children

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/stackdome/stackdome/hooks/internal/observed"
)

// KeepRunning rebuilds every observed child from its last-applied
// annotation (given in the order to answer them), so that a spec that
// cannot be turned into children changes nothing that runs: what Sync does
// not return, Metacontroller deletes. Observed objects are never echoed back
// (their server-set fields would make Metacontroller update them on every
// sync). A child without the annotation cannot be rebuilt, and then the sync
// must fail rather than delete it.
//
// The annotation is trusted only as the observed child's own: its
// apiVersion and kind must be those of the group the child was observed in,
// its metadata.name the child's name and its metadata.namespace, when it
// has one, the child's namespace, and nothing may follow the JSON object.
// Metacontroller matches desired children to observed ones by exactly that
// identity and deletes the observed ones left unmatched, so an annotation
// edited to name another object (anyone who can patch the Deployment can
// write it) would otherwise delete the running child.
func KeepRunning(children []observed.LastApplied) ([]any, error) {
	var out []any
	for _, c := range children {
		g, k, la := c.Group, c.Key, observed.AnnotationLastApplied
		if c.Err != nil {
			return nil, fmt.Errorf("decoding observed %s %q: %w", g, k, c.Err)
		}
		if !c.Found {
			// Metacontroller's server-side-apply strategy strips the
			// annotation (docs/bad-input.md): nothing to rebuild from, and
			// managedFields name the fields, not their last values.
			return nil, fmt.Errorf("observed %s %q has no %s annotation to rebuild it from (Metacontroller's --apply-strategy=server-side-apply writes none)", g, k, la)
		}
		child, err := decodeWhole([]byte(c.Config))
		if err != nil {
			return nil, fmt.Errorf("rebuilding observed %s %q from %s: %w", g, k, la, err)
		}
		if child["apiVersion"] == nil || child["kind"] == nil {
			return nil, fmt.Errorf("rebuilding observed %s %q: %s lacks apiVersion or kind", g, k, la)
		}
		if err := sameIdentity(c, child); err != nil {
			return nil, fmt.Errorf("rebuilding observed %s %q: %s %w", g, k, la, err)
		}
		out = append(out, child)
	}
	return out, nil
}

// decodeWhole is decodeObject for a value that must be one JSON object and
// nothing else: data after it (but white space) is refused.
func decodeWhole(b []byte) (object, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m object
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("not an object")
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("data after the JSON object at offset %d", end)
	}
	return m, nil
}

// sameIdentity says why child, decoded from c's annotation, is not the
// observed child c, or nil when it is: apiVersion and kind those of c's
// group (Metacontroller's "Kind.apiVersion" key), name c's, and namespace,
// if set and not empty (empty is the API server's default), c's.
func sameIdentity(c observed.LastApplied, child object) error {
	kind, apiVersion, _ := strings.Cut(c.Group, ".")
	meta, _ := child["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	got := fmt.Sprintf("%v/%v %v", child["apiVersion"], child["kind"], meta["name"])
	want := apiVersion + "/" + kind + " " + c.Name
	if child["apiVersion"] != apiVersion || child["kind"] != kind || name != c.Name {
		return fmt.Errorf("names %s, not the observed %s", got, want)
	}
	if ns, set := meta["namespace"]; set && ns != "" && ns != c.Namespace {
		return fmt.Errorf("names namespace %v, not the observed %q", ns, c.Namespace)
	}
	return nil
}
