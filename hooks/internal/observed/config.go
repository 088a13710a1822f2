package observed

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash"
	"sync"

	"github.com/stackdome/stackdome/schema"
)

// Group keys of the related ConfigMaps and Secrets.
var (
	groupConfigMap = "ConfigMap.v1"
	groupSecret    = "Secret.v1"
)

// Config is what the request says about the ConfigMaps and Secrets the spec
// uses (schema.Spec.ConfigRefs), which the customize hook relates by name in
// the parent's namespace.
type Config struct {
	// Digest is the hex SHA-256 of the content of every reference that rolls
	// the pods: kind, name and the SHA-256 of its data and of its
	// binaryData as sent (or that the object is absent). Empty when no
	// reference rolls the pods. It is the only thing the content becomes:
	// no value of a Secret is kept, logged or returned.
	Digest string
	// Missing are the references, neither optional nor related, in
	// ConfigRefs' order: the pods cannot start without them.
	Missing []schema.ConfigRef
	// Unwatched are the references of a kind the install does not relate
	// (Unrelated), in ConfigRefs' order: never Missing, never in Digest.
	Unwatched []schema.ConfigRef
}

// Unrelated says which kinds of config the install does not relate (the
// chart's relate.secrets and relate.configMaps false): the customize hook
// asks Metacontroller for none of them, so a sync request never shows one,
// and their content cannot roll the pods. The zero value relates both.
type Unrelated struct {
	ConfigMaps, Secrets bool
}

// Kind reports whether objects of kind (ConfigMap or Secret) are not related.
func (u Unrelated) Kind(kind string) bool {
	if kind == schema.KindSecret {
		return u.Secrets
	}
	return u.ConfigMaps
}

// contentSum is the SHA-256 of a data or binaryData map, computed while it
// is decoded: the values are hashed and dropped, never kept.
type contentSum struct {
	sum [sha256.Size]byte
	set bool
}

// UnmarshalJSON hashes a JSON object of strings as it is sent, compacted:
// Metacontroller marshals every object with Go's encoder, which writes map
// keys sorted and escapes alike, so the same content always gives the same
// bytes, and no key or value is ever decoded into a string of its own (a
// ConfigMap of many keys costs no allocation per key). null is the empty
// map.
func (c *contentSum) UnmarshalJSON(b []byte) error {
	buf := compactBufs.Get().(*bytes.Buffer)
	defer compactBufs.Put(buf)
	buf.Reset()
	if err := json.Compact(buf, b); err != nil {
		return err
	}
	if v := buf.Bytes(); len(v) == 0 || v[0] != '{' {
		if string(v) != "null" {
			return errors.New("data and binaryData must be objects of strings")
		}
		buf.Reset()
		buf.WriteString("{}")
	}
	c.sum = sha256.Sum256(buf.Bytes())
	c.set = true
	return nil
}

// compactBufs holds the buffers contentSum compacts into.
var compactBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeField writes s to h with its length, so that no two sequences of
// fields hash alike.
func writeField(h hash.Hash, s string) {
	var n [8]byte
	for i, l := 0, uint64(len(s)); i < 8; i, l = i+1, l>>8 {
		n[i] = byte(l)
	}
	h.Write(n[:])
	h.Write([]byte(s))
}

// content is the part of a related ConfigMap or Secret the digest reads.
type content struct {
	Metadata   Meta       `json:"metadata"`
	Data       contentSum `json:"data"`
	BinaryData contentSum `json:"binaryData"`
}

// config observes the references of spec in namespace; those of a kind
// unrelated are Unwatched.
func (r *Request) config(namespace string, spec schema.Spec, unrelated Unrelated) Config {
	refs := spec.ConfigRefs()
	if len(refs) == 0 {
		return Config{}
	}
	var out Config
	h := sha256.New()
	rolls := false
	for _, ref := range refs {
		group := groupConfigMap
		if ref.Kind == schema.KindSecret {
			group = groupSecret
		}
		if unrelated.Kind(ref.Kind) {
			out.Unwatched = append(out.Unwatched, ref)
			continue
		}
		c, ok := r.content(group, namespace, ref.Name)
		if !ok && !ref.Optional {
			out.Missing = append(out.Missing, ref)
		}
		if !ref.Roll {
			continue
		}
		rolls = true
		writeField(h, ref.Kind)
		writeField(h, ref.Name)
		if !ok {
			writeField(h, "absent")
			continue
		}
		h.Write(c.Data.sum[:])
		h.Write(c.BinaryData.sum[:])
	}
	if rolls {
		out.Digest = hex.EncodeToString(h.Sum(nil))
	}
	return out
}

// content is the related object namespace/name of group, in either hook
// version's key form, unless it is being deleted or says another
// namespace. One whose metadata, data or binaryData does not decode exists,
// and its digest is that of its bytes: a change still rolls the pods.
func (r *Request) content(group, namespace, name string) (content, bool) {
	o, ok := named(r.related[group], namespace, name)
	if !ok {
		return content{}, false
	}
	c := content{Metadata: o.v.Metadata, Data: o.v.Data, BinaryData: o.v.BinaryData}
	if !o.read(&c) {
		return content{Data: contentSum{sum: sha256.Sum256(o.raw), set: true}}, true
	}
	return c, c.Metadata.DeletionTimestamp == nil && (c.Metadata.Namespace == "" || c.Metadata.Namespace == namespace)
}
