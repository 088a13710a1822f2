package observed

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/stackdome/stackdome/metacontroller"
)

// Request is a sync request as the hook reads it, in one of two forms that
// read alike (see the package comment): every object decoded in one pass, or
// each raw object decoded when it is read.
type Request struct {
	// Parent is the raw StackResource (DecodeParent reads it).
	Parent json.RawMessage

	decoded *onePass                    // the one-pass form, or nil
	raw     *metacontroller.SyncRequest // the object-by-object form, or nil
	one     onePass                     // decoded's storage
	cache   *Cache                      // what Decode was given, or nil
}

// onePass is a sync request decoded in one pass into the fields the hook
// reads: every observed child as a Child, every related object as a Related.
// The decoder (decode.go) still reads the managedFields, specs and statuses
// it skips, but allocates nothing for them, and reads each byte once,
// validating as it decodes, instead of four times for the raw-then-typed
// decoding of a metacontroller.SyncRequest with encoding/json. Its fields are metacontroller.SyncRequest's,
// each at least as strict, so that a body it decodes decodes as a
// SyncRequest too: Finalizing is read for that alone (a finalizing that is
// not a bool is refused here as there).
type onePass struct {
	Parent     json.RawMessage               `json:"parent"`
	Children   map[string]map[string]Child   `json:"children"`
	Related    map[string]map[string]Related `json:"related"`
	Finalizing bool                          `json:"finalizing"`
}

// Decode reads a sync request body into r, once b finds it within budget
// (a *BudgetError otherwise, before anything is decoded): in one pass when
// every object fits the fields the hook reads, else object by object, as
// FromSyncRequest. Any other error means the body is not a sync request at
// all. r is filled in place so that a handler's Request needs no
// allocation.
//
// With c not nil, what r reads is the same, from c where it can be: a body
// decoded before is not measured or decoded again, and one written as
// Metacontroller writes one is decoded object by object, each child,
// related object and the parent (Request.DecodeParent) from c when the same
// bytes were decoded before, kept there otherwise (Cache.decodeCanonical).
func Decode(body []byte, r *Request, c *Cache, b Budget) error {
	return DecodeAdmitted(body, r, c, b, nil)
}

// DecodeAdmitted is Decode that, when the body is to be decoded (not found
// whole in c), calls admit with the number of objects it holds after
// measuring it against b and before decoding anything; admit's error is
// returned as it is. A nil admit admits everything.
func DecodeAdmitted(body []byte, r *Request, c *Cache, b Budget, admit func(objects int) error) error {
	r.one = onePass{}
	r.cache = c
	var key cacheKey
	if c != nil {
		held, k, ok := c.body(body)
		if ok {
			r.one = *held
			r.Parent, r.decoded = r.one.Parent, &r.one
			return nil
		}
		key = k
	}
	objects, err := b.Measure(body)
	if err != nil {
		return err
	}
	if admit != nil {
		if err := admit(objects); err != nil {
			return err
		}
	}
	if c != nil && c.decodeCanonical(body, &r.one) {
		r.Parent, r.decoded = r.one.Parent, &r.one
		kept := r.one
		c.putBody(key, &kept, true)
		return nil
	}
	r.one = onePass{}
	if unmarshal(body, &r.one) == nil {
		r.Parent, r.decoded = r.one.Parent, &r.one
		if c != nil {
			kept := r.one
			c.putBody(key, &kept, false)
		}
		return nil
	}
	var req metacontroller.SyncRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("decoding request: %s", TypeError(err))
	}
	*r = FromSyncRequest(&req)
	return nil
}

// DecodeParent is DecodeParent of r's parent, from the Cache Decode was
// given when the same bytes were decoded before.
func (r *Request) DecodeParent() (*Parent, error) {
	if r.cache == nil || len(r.Parent) == 0 || string(r.Parent) == "null" {
		return DecodeParent(r.Parent) // nothing to keep: no parent is an error
	}
	var p Parent
	if err := decodeCached(r.cache, keyParent, r.Parent, &p, func(raw []byte, p *Parent) error {
		d, err := DecodeParent(raw)
		if err == nil {
			*p = *d
		}
		return err
	}); err != nil {
		return nil, err
	}
	return &p, nil
}

// FromSyncRequest reads a request already split into raw objects; each is
// decoded when it is read. req must not change while the Request is used.
func FromSyncRequest(req *metacontroller.SyncRequest) Request {
	return Request{Parent: req.Parent, raw: req}
}

// child looks up the observed child of the group under either hook
// version's key. found says it is there; err that it does not decode.
func (r *Request) child(group, namespace, name string) (c *Child, found bool, err error) {
	if r.decoded != nil {
		g := r.decoded.Children[group]
		w, ok := g[name]
		if !ok {
			w, ok = g[namespace+"/"+name]
		}
		if !ok {
			return nil, false, nil
		}
		return &w, true, nil // a copy: the caller may change it
	}
	raw, ok := r.raw.Children.Named(group, namespace, name)
	if !ok {
		return nil, false, nil
	}
	c = new(Child)
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, true, err
	}
	return c, true, nil
}

// lookup is child for the readers that can do without a child that does
// not decode: it reads as missing.
func (r *Request) lookup(namespace string) func(group, name string) *Child {
	return func(group, name string) *Child {
		c, _, err := r.child(group, namespace, name)
		if err != nil {
			return nil
		}
		return c
	}
}

// pods are the related pods by key; one that does not decode is an error.
func (r *Request) pods() (map[string]Related, error) {
	if r.decoded != nil {
		return r.decoded.Related[groupPod], nil
	}
	pods := make(map[string]Related, len(r.raw.Related[groupPod]))
	for key, raw := range r.raw.Related[groupPod] {
		var pd Related
		if err := json.Unmarshal(raw, &pd); err != nil {
			return nil, fmt.Errorf("decoding related pod %q: %w", key, err)
		}
		pods[key] = pd
	}
	return pods, nil
}

// errorService finds the chart's error-page Service among the related
// objects, in either hook version's key form. A related object of an
// unexpected shape reads as a Service without a usable address: it changes
// nothing else.
func (r *Request) errorService(svc ErrorService) RelatedService {
	if r.decoded != nil {
		g := r.decoded.Related[groupService]
		s, ok := g[svc.Name]
		if !ok {
			s, ok = g[svc.Namespace+"/"+svc.Name]
		}
		if !ok {
			return RelatedService{}
		}
		return relatedServiceOf(s.Metadata, s.Spec, svc)
	}
	raw, ok := r.raw.Related.Named(groupService, svc.Namespace, svc.Name)
	if !ok {
		return RelatedService{}
	}
	var s struct {
		Metadata Meta        `json:"metadata"`
		Spec     ServiceSpec `json:"spec"`
	}
	if json.Unmarshal(raw, &s) != nil {
		return RelatedService{Seen: true}
	}
	return relatedServiceOf(s.Metadata, s.Spec, svc)
}

// LastApplied is one observed child's
// metacontroller.k8s.io/last-applied-configuration annotation.
type LastApplied struct {
	Group, Key string
	// Name and Namespace are the observed child's own metadata: what
	// Metacontroller matches the desired children against.
	Name, Namespace string
	Config          string // the annotation's value
	Found           bool   // the child carries the annotation
	Err             error  // the child's metadata does not decode
}

// AnnotationLastApplied is Metacontroller's annotation holding, on every
// child it applied with its default dynamic-apply strategy, the exact JSON
// the hook last returned.
const AnnotationLastApplied = "metacontroller.k8s.io/last-applied-configuration"

// LastApplied is every observed child's last-applied annotation, by group
// and key in sorted order.
func (r *Request) LastApplied() []LastApplied {
	var out []LastApplied
	if r.decoded != nil {
		for _, g := range slices.Sorted(maps.Keys(r.decoded.Children)) {
			for _, k := range slices.Sorted(maps.Keys(r.decoded.Children[g])) {
				m := r.decoded.Children[g][k].Metadata
				la, ok := m.Annotations.Get(AnnotationLastApplied)
				out = append(out, LastApplied{Group: g, Key: k, Name: m.Name, Namespace: m.Namespace, Config: la, Found: ok})
			}
		}
		return out
	}
	for _, g := range slices.Sorted(maps.Keys(r.raw.Children)) {
		for _, k := range slices.Sorted(maps.Keys(r.raw.Children[g])) {
			var obj struct {
				Metadata struct {
					Name        string            `json:"name"`
					Namespace   string            `json:"namespace"`
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(r.raw.Children[g][k], &obj); err != nil {
				out = append(out, LastApplied{Group: g, Key: k, Err: err})
				continue
			}
			m := obj.Metadata
			la, ok := m.Annotations[AnnotationLastApplied]
			out = append(out, LastApplied{Group: g, Key: k, Name: m.Name, Namespace: m.Namespace, Config: la, Found: ok})
		}
	}
	return out
}
