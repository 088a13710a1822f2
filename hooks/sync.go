// Package hooks answers Metacontroller's sync and customize hooks for
// StackResources. Sync and Customize are pure: they read a request, a
// read-only view of the port verifier and a clock value, and return the
// answer and the dials to schedule; only the HTTP handlers touch the
// verifier. Its invariant: a 200 answer always carries every child that
// should exist, because what it leaves out Metacontroller deletes.
package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/schema"
)

// RequestError is a request the hook cannot answer; Status is the HTTP code
// to reply with (400 malformed, 422 unanswerable without deleting what runs).
// Metacontroller changes nothing on a non-200 answer and retries.
type RequestError struct {
	Status int
	Err    error
}

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

func badRequest(format string, args ...any) error {
	return &RequestError{Status: http.StatusBadRequest, Err: fmt.Errorf(format, args...)}
}

// Sync computes the desired children and the status of one StackResource
// with DefaultConfig. See Config.Sync.
func Sync(req *metacontroller.SyncRequest, verdicts Verdicts, now time.Time) (*metacontroller.SyncResponse, []DialJob, error) {
	return DefaultConfig().Sync(req, verdicts, now)
}

// Sync computes the desired children and the status of one StackResource.
// It performs no I/O and reads no clock: now stamps transitions, verdicts is
// a read-only view of the port verifier (nil reads as a verifier that knows
// nothing), and the dials it wants are returned, not performed. An error is
// a *RequestError; the response is then nil, never partial.
func (c Config) Sync(req *metacontroller.SyncRequest, verdicts Verdicts, now time.Time) (*metacontroller.SyncResponse, []DialJob, error) {
	c = c.withDefaults()
	if verdicts == nil {
		verdicts = noVerdicts{}
	}
	p, err := decodeParent(req.Parent)
	if err != nil {
		return nil, nil, err
	}
	stamp := stampOf(now)
	spec, err := validSpec(p)
	if err != nil {
		children, kerr := keepRunning(req.Children)
		if kerr != nil {
			return nil, nil, &RequestError{Status: http.StatusUnprocessableEntity, Err: fmt.Errorf("%w; and the running children cannot be kept: %w", err, kerr)}
		}
		return &metacontroller.SyncResponse{Status: invalidStatus(p, err, stamp), Children: nonNil(children)}, nil, nil
	}
	obs, err := observe(req, p, c)
	if err != nil {
		return nil, nil, &RequestError{Status: http.StatusBadRequest, Err: err}
	}
	cl := claimsFor(p.Metadata.Name, p.Metadata.Namespace, spec, obs.workload)
	want, err := buildChildren(c, p.Metadata.Name, spec, cl)
	if err != nil {
		return nil, nil, fmt.Errorf("building children: %w", err)
	}
	children := append(want.children, wiringChildren(c, p.Metadata.Name, spec, obs.wiring)...)
	out := decide(c, p, spec, want.revision, obs, cl, verdicts, stamp)
	return &metacontroller.SyncResponse{
		Status:             out.status,
		Children:           nonNil(children),
		ResyncAfterSeconds: out.resync.Seconds(),
	}, out.jobs, nil
}

// decodeParent reads the StackResource of a request.
func decodeParent(raw json.RawMessage) (*parent, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, badRequest("request has no parent")
	}
	var p parent
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, badRequest("decoding parent: %s", typeError(err))
	}
	if len(p.RawSpec) == 0 || string(p.RawSpec) == "null" {
		p.SpecErr = errors.New("invalid spec: spec is missing")
	} else if err := json.Unmarshal(p.RawSpec, &p.Spec); err != nil {
		// A spec of the wrong shape is an invalid spec, not a bad request:
		// the running children are kept and status says why.
		p.SpecErr = fmt.Errorf("invalid spec: %s", typeError(err))
	}
	if p.Metadata.Name == "" {
		return nil, badRequest("parent has no metadata.name")
	}
	if p.Kind != "" && p.Kind != schema.Kind {
		return nil, badRequest("parent is a %s, not a %s", p.Kind, schema.Kind)
	}
	return &p, nil
}

// nonNil keeps an empty child list from encoding as null.
func nonNil(children []any) []any {
	if children == nil {
		return []any{}
	}
	return children
}

// typeError says in one line what a JSON decoding error found.
func typeError(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		return fmt.Sprintf("field %s: cannot use a JSON %s as %s", ute.Field, ute.Value, ute.Type)
	}
	return err.Error()
}

// validSpec returns the parent's spec with its defaults, or why it is invalid:
// of the wrong shape, refused by schema.Validate, or under a name its
// children cannot take.
func validSpec(p *parent) (schema.Spec, error) {
	spec := schema.Default(p.Spec)
	if p.SpecErr != nil {
		return spec, p.SpecErr
	}
	if err := schema.ValidateName(p.Metadata.Name); err != nil {
		return spec, err
	}
	return spec, schema.Validate(spec)
}

// stampOf is now as status stamps it: whole seconds in UTC, what survives a
// round trip through the API server, so a status fed back compares equal.
func stampOf(now time.Time) metav1.Time {
	return metav1.NewTime(now.UTC().Truncate(time.Second))
}
