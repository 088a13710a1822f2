package hooks

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/schema"
)

// The one-pass path of the sync handler: a well-formed request is decoded
// once into the fields the hook reads, its children come from the cache, and
// the answer is encoded by parts. It answers exactly as Sync does.

// syncAnswer is an encoded sync answer, the dials it asks for, and for the
// log the parent's namespace/name and resyncAfterSeconds.
type syncAnswer struct {
	body   []byte
	jobs   []DialJob
	parent string
	resync float64
}

// answer computes the answer to a sync request body. The common case — a
// well-formed request whose spec is valid — is decoded in one pass
// (wireRequest), reuses the children built for the same name and spec
// (childCache) and is encoded by parts; it gives Sync's answer byte for byte
// (TestFastPathIsSync, FuzzSync). Anything else — a body that is not a
// well-formed sync request, an invalid spec — is answered by Sync itself, so
// every refusal and every invalid-spec answer is exactly Sync's.
func (h *Handler) answer(body []byte) (syncAnswer, error) {
	cfg := h.Config.withDefaults()
	now := h.now()
	var wire wireRequest
	if json.Unmarshal(body, &wire) == nil {
		p, err := decodeParent(wire.Parent)
		if err != nil {
			return syncAnswer{}, err // Sync's first step on the same raw parent
		}
		if spec, err := validSpec(p); err == nil {
			obs := observeWire(&wire, p, cfg)
			cl := claimsFor(p.Metadata.Name, p.Metadata.Namespace, spec, obs.workload)
			built, err := h.children.get(cfg, p.Metadata.Name, p.RawSpec, spec, cl)
			if err != nil {
				return syncAnswer{}, fmt.Errorf("building children: %w", err)
			}
			wired, err := h.children.wired(cfg, p.Metadata.Name, p.RawSpec, spec, obs.wiring)
			if err != nil {
				return syncAnswer{}, err
			}
			children := joinArrays(built.json, wired)
			out := decide(cfg, p, spec, built.revision, obs, cl, h.Verifier, stampOf(now))
			b, err := encodeSync(out.status, children, out.resync.Seconds())
			if err != nil {
				return syncAnswer{}, err
			}
			return syncAnswer{body: b, jobs: out.jobs, parent: p.Metadata.Namespace + "/" + p.Metadata.Name, resync: out.resync.Seconds()}, nil
		}
	}
	var req metacontroller.SyncRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return syncAnswer{}, &RequestError{Status: http.StatusBadRequest, Err: fmt.Errorf("decoding request: %s", oneLine(typeError(err)))}
	}
	resp, jobs, err := cfg.Sync(&req, h.Verifier, now)
	if err != nil {
		return syncAnswer{}, err
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return syncAnswer{}, fmt.Errorf("encoding response: %w", err)
	}
	return syncAnswer{body: b, jobs: jobs, parent: parentName(req.Parent), resync: resp.ResyncAfterSeconds}, nil
}

// encodeSync writes what json.Marshal writes for a
// metacontroller.SyncResponse of status, the already encoded children array
// and resync, without encoding the children again.
func encodeSync(status schema.Status, children []byte, resync float64) ([]byte, error) {
	st, err := json.Marshal(status)
	if err != nil {
		return nil, fmt.Errorf("encoding response: %w", err)
	}
	b := make([]byte, 0, len(st)+len(children)+64)
	b = append(b, `{"status":`...)
	b = append(b, st...)
	b = append(b, `,"children":`...)
	b = append(b, children...)
	if resync != 0 {
		r, err := json.Marshal(resync)
		if err != nil {
			return nil, fmt.Errorf("encoding response: %w", err)
		}
		b = append(b, `,"resyncAfterSeconds":`...)
		b = append(b, r...)
	}
	return append(b, '}'), nil
}

// joinArrays joins two encoded JSON arrays into one.
func joinArrays(a, b []byte) []byte {
	switch {
	case len(b) <= 2:
		return a
	case len(a) <= 2:
		return b
	}
	out := make([]byte, 0, len(a)+len(b))
	out = append(out, a[:len(a)-1]...)
	out = append(out, ',')
	return append(out, b[1:]...)
}

// wireRequest is a sync request decoded in one pass into the fields the hook
// reads. Every observed child is read as a workload and every related object
// as a pod; the parent stays raw so that decodeParent reads it exactly as Sync
// does. encoding/json still scans the managedFields, specs and statuses it
// skips, but allocates nothing for them and scans each byte twice (validation
// and decoding) instead of four times for the raw-then-typed decoding of
// metacontroller.SyncRequest.
type wireRequest struct {
	Parent     json.RawMessage                `json:"parent"`
	Children   map[string]map[string]workload `json:"children"`
	Related    map[string]map[string]pod      `json:"related"`
	Finalizing bool                           `json:"finalizing"`
}

// observeWire is observe over a wireRequest. Its result equals observe's on
// the same request whenever the wireRequest decoded without error: the same
// structs read the same bytes, and map values are decoded fresh per key as
// observe decodes each raw object.
func observeWire(req *wireRequest, p *parent, cfg Config) observed {
	var o observed
	child := func(group, name string) *workload {
		g := req.Children[group]
		w, ok := g[name]
		if !ok {
			w, ok = g[p.Metadata.Namespace+"/"+name]
		}
		if !ok {
			return nil
		}
		return &w // a copy: the caller may change it
	}
	o.workload = child(workloadGroup(p), p.Metadata.Name)
	o.pods = livePods(req.Related[groupPod])
	var related relatedService
	g := req.Related[groupService]
	s, ok := g[cfg.ErrorService.Name]
	if !ok {
		s, ok = g[cfg.ErrorService.Namespace+"/"+cfg.ErrorService.Name]
	}
	if ok {
		related = relatedServiceOf(s.Metadata, s.Spec, cfg)
	}
	o.wiring = viewWiring(p.Metadata.Name, p.Metadata.Namespace, child, related)
	return o
}
