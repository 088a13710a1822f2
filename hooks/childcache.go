package hooks

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/stackdome/stackdome/schema"
)

// childCache keeps, per parent name and raw spec, the revision and encoded
// children that buildChildren makes of them, and per observed wiring the
// encoded routing children: pure functions of those and of the handler's
// fixed Config, asked for again on every sync of an unchanged resource
// (Metacontroller resyncs every parent each resyncPeriodSeconds and on every
// pod change). It is bounded in bytes; when full, arbitrary entries make
// room. Its zero value is ready to use.
type childCache struct {
	mu      sync.Mutex
	entries map[string]*builtChildren
	size    int // bytes of keys and encoded children held
}

// builtChildren are the children of one spec as the answer carries them.
type builtChildren struct {
	revision string
	json     []byte // the children array, encoded as json.Marshal does
}

// maxCachedBytes bounds the cache: a few thousand typical resources.
const maxCachedBytes = 8 << 20

// get returns the children of name and spec (the defaulted decoding of
// rawSpec) with claim templates cl, building and caching them when not held.
// Children that keep observed claim templates depend on more than the spec:
// they are built every time, never cached.
func (c *childCache) get(cfg Config, name string, rawSpec []byte, spec schema.Spec, cl claims) (*builtChildren, error) {
	if cl.kept != nil {
		return build(cfg, name, spec, cl)
	}
	return c.cached(name+"\x00"+string(rawSpec), func() (*builtChildren, error) { return build(cfg, name, spec, cl) })
}

// wired returns the routing children (wiringChildren) of name and spec under
// the observed wiring v, encoded as a JSON array. They are a pure function of
// the three and of Config, and the wiring a request observes changes only
// when the wiring does, so they are cached like the spec's own children.
func (c *childCache) wired(cfg Config, name string, rawSpec []byte, spec schema.Spec, v wiringView) ([]byte, error) {
	b, err := c.cached("w\x00"+name+"\x00"+string(rawSpec)+"\x00"+v.key(), func() (*builtChildren, error) {
		j, err := json.Marshal(nonNil(wiringChildren(cfg, name, spec, v)))
		if err != nil {
			return nil, fmt.Errorf("encoding children: %w", err)
		}
		return &builtChildren{json: j}, nil
	})
	if err != nil {
		return nil, err
	}
	return b.json, nil
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

// build makes and encodes the children of name and spec.
func build(cfg Config, name string, spec schema.Spec, cl claims) (*builtChildren, error) {
	want, err := buildChildren(cfg, name, spec, cl)
	if err != nil {
		return nil, err
	}
	j, err := json.Marshal(nonNil(want.children))
	if err != nil {
		return nil, fmt.Errorf("encoding children: %w", err)
	}
	return &builtChildren{revision: want.revision, json: j}, nil
}
