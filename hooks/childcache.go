package hooks

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/stackdome/stackdome/hooks/internal/children"
	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// childCache is the handler's childSource: it keeps, per parent name and raw
// spec and config digest, the revision and encoded children that children.Build
// makes of them, and per observed wiring the encoded routing children: pure
// functions of those and of the handler's fixed Config, asked for again on
// every sync of an unchanged resource (Metacontroller resyncs every parent each
// resyncPeriodSeconds and on every pod change). It is bounded in bytes; when
// full, arbitrary entries make room. Its zero value is ready to use.
type childCache struct {
	mu      sync.Mutex
	entries map[string]*builtChildren
	size    int // bytes of keys and encoded children held
}

// builtChildren are the children of one spec as the answer carries them.
type builtChildren struct {
	revision string
	json     []byte              // the children array, encoded as json.Marshal does
	refs     []observed.ChildRef // each child's name, in the array's order
}

// maxCachedBytes bounds the cache: a few thousand typical resources.
const maxCachedBytes = 8 << 20

// own is the childSource's own: the children of name and spec (the
// defaulted decoding of rawSpec) with claim templates cl, built and cached
// when not held. Children that keep observed claim templates depend on more
// than the spec: they are built every time, never cached.
func (c *childCache) own(cfg children.Config, ns, name string, rawSpec []byte, spec schema.Spec, cl children.Claims, digest string) (string, childList, error) {
	var b *builtChildren
	var err error
	if cl.Kept != nil {
		b, err = encodeBuilt(cfg, ns, name, spec, cl, digest)
	} else {
		// The namespace is in the key: the NetworkPolicy names it.
		b, err = c.cached(ns+"\x00"+name+"\x00"+digest+"\x00"+string(rawSpec), func() (*builtChildren, error) { return encodeBuilt(cfg, ns, name, spec, cl, digest) })
	}
	if err != nil {
		return "", childList{}, err
	}
	return b.revision, childList{encoded: b.json, refs: b.refs}, nil
}

// routing is the childSource's routing: the routing children of name and
// spec under the observed wiring v, encoded. They are a pure function of
// the three and of the Config, and the wiring a request observes changes
// only when the wiring does, so they are cached like the spec's own
// children.
func (c *childCache) routing(cfg children.Config, name string, rawSpec []byte, spec schema.Spec, v observed.Wiring) (childList, error) {
	b, err := c.cached("w\x00"+name+"\x00"+string(rawSpec)+"\x00"+v.Key(), func() (*builtChildren, error) {
		objs, err := children.Routing(cfg, name, spec, v)
		if err != nil {
			return nil, err
		}
		return encode("", objs)
	})
	if err != nil {
		return childList{}, err
	}
	return childList{encoded: b.json, refs: b.refs}, nil
}

// cached returns the entry of key, making and keeping it when not held.
func (c *childCache) cached(key string, make func() (*builtChildren, error)) (*builtChildren, error) {
	c.mu.Lock()
	b := c.entries[key]
	c.mu.Unlock()
	if b != nil {
		return b, nil
	}
	b, err := make()
	if err != nil {
		return nil, err
	}
	n := len(key) + len(b.json)
	if n > maxCachedBytes/64 {
		return b, nil // one huge spec must not flush the cache
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		c.entries = map[string]*builtChildren{}
	}
	if old, ok := c.entries[key]; ok {
		return old, nil
	}
	for k, e := range c.entries {
		if c.size+n <= maxCachedBytes {
			break
		}
		delete(c.entries, k)
		c.size -= len(k) + len(e.json)
	}
	c.entries[key] = b
	c.size += n
	return b, nil
}

// encodeBuilt makes and encodes the children of name and spec.
func encodeBuilt(cfg children.Config, ns, name string, spec schema.Spec, cl children.Claims, digest string) (*builtChildren, error) {
	d, err := buildOwn(cfg, ns, name, spec, cl, digest)
	if err != nil {
		return nil, err
	}
	return encode(d.Revision, d.Children)
}

// encode is children as an entry: encoded as json.Marshal encodes them in
// an answer, [] when there are none.
func encode(revision string, objs []any) (*builtChildren, error) {
	if objs == nil {
		objs = []any{}
	}
	j, err := json.Marshal(objs)
	if err != nil {
		return nil, fmt.Errorf("encoding children: %w", err)
	}
	return &builtChildren{revision: revision, json: j, refs: children.Refs(objs)}, nil
}
