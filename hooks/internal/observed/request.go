package observed

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"github.com/stackdome/stackdome/metacontroller"
)

// Request is a sync request as the hook reads it: the parent's bytes, and
// every child and related object decoded into the fields the hook reads
// (Child, Related), or the reason it does not decode. It is read, never
// changed: its maps may be shared with a Cache and with other requests.
type Request struct {
	decodedBody
	cache *Cache // what Decode was given, or nil
}

// decodedBody is what a request body decodes into: what the Cache keeps of
// a whole body.
type decodedBody struct {
	// Parent is the raw StackResource (DecodeParent reads it).
	Parent   json.RawMessage
	children objects[Child]
	related  objects[Related]
}

// objects are the children or related objects of a request by group and key.
// A group given as null is there, empty.
type objects[T any] map[string]map[string]object[T]

// object is one child or related object: what its bytes decode into, or the
// error that says why they do not, with the bytes (copied) so that a reader
// that can do without the rest reads the part it needs (read).
type object[T any] struct {
	v   T
	err error
	raw []byte
}

// read is the part of o a reader needs, decoded into part, when o does not
// decode whole: it reports whether that part does.
func (o object[T]) read(part any) bool { return o.err == nil || unmarshal(o.raw, part) == nil }

// Decode reads a sync request body into r once it finds the body within
// budget b (a *BudgetError otherwise, before any object is decoded). Any
// other error means the body is not a sync request as Metacontroller sends
// one (walk.go). r is filled in place so that a handler's Request needs no
// allocation.
//
// With c not nil, what r reads is the same, from c where it can be: a body
// decoded before is not walked or decoded again, and each child, related
// object and the parent (Request.DecodeParent) is taken from c when the same
// bytes were decoded before, kept there otherwise.
func Decode(body []byte, r *Request, c *Cache, b Budget) error {
	return DecodeAdmitted(body, r, c, b, nil)
}

// DecodeAdmitted is Decode that, when the body is to be decoded (not found
// whole in c), calls admit with the number of objects it holds after
// walking it within b and before decoding any object; admit's error is
// returned as it is. A nil admit admits everything.
func DecodeAdmitted(body []byte, r *Request, c *Cache, b Budget, admit func(objects int) error) error {
	*r = Request{cache: c}
	var key cacheKey
	if c != nil {
		h, k, ok := c.body(body)
		if ok {
			r.decodedBody = *h
			return nil
		}
		key = k
	}
	req, objects, err := b.walk(body)
	if err != nil {
		return err
	}
	if admit != nil {
		if err := admit(objects); err != nil {
			return err
		}
	}
	r.decodedBody = decode(&req, c)
	r.Parent = bytes.Clone(r.Parent) // the body's buffer is reused
	if c != nil {
		kept := r.decodedBody
		c.putBody(key, &kept)
	}
	return nil
}

// FromSyncRequest reads a request already split into raw objects (Sync's
// path): as Decode reads a body, without a Cache. req must not change while
// the Request is used.
func FromSyncRequest(req *metacontroller.SyncRequest) Request {
	return Request{decodedBody: decode(req, nil)}
}

// decode decodes every object of req, each through c when c is not nil.
func decode(req *metacontroller.SyncRequest, c *Cache) decodedBody {
	return decodedBody{
		Parent:   req.Parent,
		children: decodeAll[Child](c, keyChild, req.Children),
		related:  decodeAll[Related](c, keyRelated, req.Related),
	}
}

// decodeAll decodes the objects of each group into T.
func decodeAll[T any](c *Cache, typ byte, in metacontroller.Objects) objects[T] {
	if in == nil {
		return nil
	}
	out := make(objects[T], len(in))
	for group, objs := range in {
		if objs == nil {
			out[group] = nil
			continue
		}
		g := make(map[string]object[T], len(objs))
		for key, raw := range objs {
			var o object[T]
			if o.err = decodeCached(c, typ, raw, &o.v, unmarshalInto[T]); o.err != nil {
				o.raw = bytes.Clone(raw)
			}
			g[key] = o
		}
		out[group] = g
	}
	return out
}

// unmarshalInto is unmarshal for decodeCached.
func unmarshalInto[T any](raw []byte, v *T) error { return unmarshal(raw, v) }

// named is the object of g whose key names name, in either hook version's
// key form: name (v1) or namespace/name (v2).
func named[T any](g map[string]object[T], namespace, name string) (object[T], bool) {
	if o, ok := g[name]; ok {
		return o, true
	}
	o, ok := g[namespace+"/"+name]
	return o, ok
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

// child looks up the observed child of the group under either hook
// version's key. found says it is there; err that it does not decode.
func (r *Request) child(group, namespace, name string) (c *Child, found bool, err error) {
	o, ok := named(r.children[group], namespace, name)
	if !ok {
		return nil, false, nil
	}
	if o.err != nil {
		return nil, true, o.err
	}
	return &o.v, true, nil // a copy: the caller may change it
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

// errorService finds the chart's error-page Service among the related
// objects, in either hook version's key form. A related object whose
// metadata or spec does not decode reads as a Service without a usable
// address: it changes nothing else.
func (r *Request) errorService(svc ErrorService) RelatedService {
	o, ok := named(r.related[groupService], svc.Namespace, svc.Name)
	if !ok {
		return RelatedService{}
	}
	s := struct {
		Metadata Meta        `json:"metadata"`
		Spec     ServiceSpec `json:"spec"`
	}{o.v.Metadata, o.v.Spec}
	if !o.read(&s) {
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
// and key in sorted order. A child that does not decode whole is read for
// its metadata alone.
func (r *Request) LastApplied() []LastApplied {
	var out []LastApplied
	for _, g := range slices.Sorted(maps.Keys(r.children)) {
		for _, k := range slices.Sorted(maps.Keys(r.children[g])) {
			o := r.children[g][k]
			m := struct {
				Metadata Meta `json:"metadata"`
			}{o.v.Metadata}
			if o.err != nil {
				if err := unmarshal(o.raw, &m); err != nil {
					out = append(out, LastApplied{Group: g, Key: k, Err: err})
					continue
				}
			}
			la, ok := m.Metadata.Annotations[AnnotationLastApplied]
			out = append(out, LastApplied{Group: g, Key: k, Name: m.Metadata.Name, Namespace: m.Metadata.Namespace, Config: la, Found: ok})
		}
	}
	return out
}
