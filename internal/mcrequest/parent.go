package mcrequest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/stackdome/stackdome/schema"
)

// StackResource is a parent as a test's stand-in cluster holds it between
// syncs: created from Spec, at Generation (one more each time the spec
// changed), with the status Metacontroller last wrote; its uid written
// when not empty. It carries no
// managedFields or last-applied annotation; the fixture generator's
// parents add them.
type StackResource struct {
	Name, Namespace, UID string
	Generation           int64
	// Labels are the parent's labels; written when not nil, so an empty
	// map is sent as {}.
	Labels map[string]string
	// Spec is the spec as JSON; it must be what the API server stores of
	// it (Stored).
	Spec json.RawMessage
	// Status is the status as Metacontroller last wrote it; nil: {}.
	Status any
}

// Object is the parent as Metacontroller sends it: apiVersion, kind,
// metadata, spec and status. It fails when the spec is not what the API
// server stores (Stored), so that no test syncs a spec Metacontroller could
// never send.
func (p StackResource) Object() (Object, error) {
	spec := ToObject(p.Spec)
	if err := Stored(spec); err != nil {
		return nil, fmt.Errorf("parent %s/%s: %w", p.Namespace, p.Name, err)
	}
	md := map[string]any{"name": p.Name, "namespace": p.Namespace, "generation": p.Generation}
	if p.UID != "" {
		md["uid"] = p.UID
	}
	if p.Labels != nil {
		md["labels"] = p.Labels
	}
	var status any = map[string]any{}
	if p.Status != nil {
		status = p.Status
	}
	return Object{"apiVersion": schema.APIVersion, "kind": schema.Kind, "metadata": md, "spec": spec,
		"status": status}, nil
}

// Stored returns nil when spec, a StackResource's spec as JSON decodes it,
// is what the API server stores of it: schema.AsStored prunes nothing and
// defaults nothing. Otherwise the error names the pruned fields, or says a
// default the CRD states is missing. spec is not changed.
func Stored(spec Object) error {
	stored := Clone(spec)
	pruned, err := schema.AsStored(stored)
	switch {
	case err != nil:
		return fmt.Errorf("storing the spec: %w", err)
	case len(pruned) > 0:
		return fmt.Errorf("the API server prunes %s from the spec", strings.Join(pruned, ", "))
	case string(Raw(stored)) != string(Raw(spec)):
		return fmt.Errorf("the spec lacks defaults the CRD states: stored, it is %s", Raw(stored))
	}
	return nil
}
