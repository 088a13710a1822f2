package hooks

import (
	"fmt"
	"slices"
	"time"

	"github.com/stackdome/stackdome/hooks/internal/children"
	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/hooks/internal/status"
	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/schema"
)

// Verdicts is the read-only view of the port verifier Sync reads. It never
// blocks; *portcheck.Verifier implements it. nil reads as a verifier that
// knows nothing.
type Verdicts = status.Verdicts

// DialJob is a dial Sync wants scheduled. Forget asks for the stored verdict
// to be dropped first, so that the next one read is a fresh dial.
type DialJob = status.DialJob

// ErrorService names the chart's Service behind the branded error pages.
type ErrorService = observed.ErrorService

// Sync computes the desired children and the status of one StackResource
// with DefaultConfig. See Config.Sync.
func Sync(req *metacontroller.SyncRequest, verdicts Verdicts, now time.Time) (*metacontroller.SyncResponse, []DialJob, error) {
	return DefaultConfig().Sync(req, verdicts, now)
}

// Sync computes the desired children and the status of one StackResource.
// It performs no I/O and reads no clock: now stamps transitions, verdicts is
// a read-only view of the port verifier (nil reads as a verifier that knows
// nothing), and the dials it wants are returned, not performed. An error is
// a *RequestError, a *HeldError (with the dials that decide the answer
// returned beside it), or a bug of ours; the response is then nil, never
// partial.
func (c Config) Sync(req *metacontroller.SyncRequest, verdicts Verdicts, now time.Time) (*metacontroller.SyncResponse, []DialJob, error) {
	in := observed.FromSyncRequest(req)
	a, err := c.pipeline(&in, verdicts, now, freshChildren{}, nil)
	switch {
	case err != nil:
		return nil, nil, err
	case a.held != "":
		return nil, a.jobs, &HeldError{Reason: a.held}
	}
	return a.response(), a.jobs, nil
}

// pipeline is the only one: decode the parent, observe, build the
// children, decide the status, answer. Sync and the handler differ only in
// its three seams: how the request was decoded (observed.Request: from the
// SyncRequest Sync is given, or from the body through the handler's Cache),
// where the children come from (src: built for
// each sync, or the handler's cache of encoded children), and whether the
// request is still wanted (alive, asked between stages: the handler's
// request context, so that an abandoned request stops taking the CPU; nil
// for Sync, whose caller owns its own time).
func (c Config) pipeline(req *observed.Request, verdicts Verdicts, now time.Time, src childSource, alive func() error) (answer, error) {
	c = c.withDefaults()
	if alive == nil {
		alive = func() error { return nil }
	}
	p, err := req.DecodeParent()
	if err != nil {
		return answer{}, malformed(err)
	}
	if err := alive(); err != nil {
		return answer{}, err
	}
	stamp := status.Stamp(now)
	spec, err := validSpec(p)
	if err != nil {
		kept, kerr := children.KeepRunning(req.LastApplied())
		if kerr != nil {
			return answer{}, &RequestError{Kind: Unanswerable, Err: fmt.Errorf("%w; and the running children cannot be kept: %w", err, kerr)}
		}
		return answer{parent: p.Key(), status: status.Invalid(p, err, stamp), own: childList{objects: kept}}, nil
	}
	obs, err := observed.Observe(req, p, c.ErrorService, c.Unrelated)
	if err != nil {
		return answer{}, malformed(err)
	}
	if err := alive(); err != nil {
		return answer{}, err
	}
	obs.Wiring.SettleOpen = status.SettleOpen(c.status(), p.Status.ChildrenMissingSince, stamp)
	cfg := c.children()
	cl := children.ClaimsFor(p.Metadata.Name, p.Metadata.Namespace, spec, obs.Workload)
	rev, own, err := src.own(cfg, p.Metadata.Namespace, p.Metadata.Name, p.RawSpec, spec, cl, obs.Config.Digest)
	if err != nil {
		return answer{}, fmt.Errorf("building children: %w", err)
	}
	if err := alive(); err != nil {
		return answer{}, err
	}
	routing, err := src.routing(cfg, p.Metadata.Name, p.RawSpec, spec, obs.Wiring)
	if err != nil {
		return answer{}, fmt.Errorf("building children: %w", err)
	}
	if err := alive(); err != nil {
		return answer{}, err
	}
	obs.Missing = req.Missing(p.Metadata.Namespace, slices.Concat(own.refs, routing.refs))
	out := status.Decide(status.Input{
		Config: c.status(), Parent: p, Spec: spec, Revision: rev, Observed: obs,
		NotApplied: cl.NotApplied, Verdicts: verdicts, Now: stamp,
	})
	if err := alive(); err != nil {
		return answer{}, err
	}
	if out.Hold != "" {
		return answer{parent: p.Key(), jobs: out.Jobs, held: out.Hold}, nil
	}
	return answer{
		parent:  p.Key(),
		status:  out.Status,
		own:     own,
		routing: routing,
		resync:  out.Resync.Seconds(),
		jobs:    out.Jobs,
	}, nil
}

// validSpec returns the parent's spec with its defaults, or why it is invalid:
// of the wrong shape, refused by schema.Validate, or under a name its
// children cannot take.
func validSpec(p *observed.Parent) (schema.Spec, error) {
	spec := schema.Default(p.Spec)
	if p.SpecErr != nil {
		return spec, p.SpecErr
	}
	if err := schema.ValidateName(p.Metadata.Name); err != nil {
		return spec, err
	}
	if err := schema.Validate(spec); err != nil {
		return spec, err
	}
	return spec, schema.ValidateChildNames(p.Metadata.Name, spec)
}
