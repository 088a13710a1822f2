package observed

import (
	"encoding/json"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/schema"
)

// Meta is the part of ObjectMeta the hook reads.
type Meta struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace,omitempty"`
	UID               string            `json:"uid,omitempty"`
	Generation        int64             `json:"generation,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
	CreationTimestamp metav1.Time       `json:"creationTimestamp,omitempty"`
	DeletionTimestamp *metav1.Time      `json:"deletionTimestamp,omitempty"`
}

// Parent is the StackResource as the hook reads it.
type Parent struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Metadata   Meta            `json:"metadata"`
	RawSpec    json.RawMessage `json:"spec"`
	Status     schema.Status   `json:"status"`

	// Spec and SpecErr carry no tag, as they always had: what a parent of
	// an odd shape decodes into must not change.
	Spec    schema.Spec // decoded from RawSpec when it can be
	SpecErr error       // why RawSpec could not be decoded
}

// Unanswered says no sync answer has been stored on p yet: its status is
// empty. Metacontroller writes the status of every answer, and the status
// subresource drops a status sent on create, so this is the first sync of a
// new resource (or one whose status write has not reached the request yet):
// nothing of it is observed that an answer made.
func (p *Parent) Unanswered() bool {
	return p.Status.ObservedGeneration == 0 && len(p.Status.Conditions) == 0
}

// DecodeParent reads the StackResource of a request. An error means the
// request cannot be read at all; a spec of the wrong shape is not one (it
// is SpecErr: an invalid spec, answered with the running children kept).
func DecodeParent(raw json.RawMessage) (*Parent, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New("request has no parent")
	}
	var p Parent
	if err := unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("decoding parent: %s", TypeError(err))
	}
	if len(p.RawSpec) == 0 || string(p.RawSpec) == "null" {
		p.SpecErr = errors.New("invalid spec: spec is missing")
	} else if err := unmarshal(p.RawSpec, &p.Spec); err != nil {
		// A spec of the wrong shape is an invalid spec, not a bad request:
		// the running children are kept and status says why.
		p.SpecErr = fmt.Errorf("invalid spec: %s", TypeError(err))
	}
	if p.Metadata.Name == "" {
		return nil, errors.New("parent has no metadata.name")
	}
	if p.Kind != "" && p.Kind != schema.Kind {
		return nil, fmt.Errorf("parent is a %s, not a %s", p.Kind, schema.Kind)
	}
	return &p, nil
}

// Key is the parent's namespace/name, as logs name it.
func (p *Parent) Key() string { return p.Metadata.Namespace + "/" + p.Metadata.Name }
