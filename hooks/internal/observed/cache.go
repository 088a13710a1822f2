package observed

import (
	"hash/maphash"
	"reflect"
	"sync"
	"time"
	"unsafe"
)

// Metacontroller resyncs every parent each resyncPeriodSeconds and on every
// change of a child or related object, and most syncs carry objects that
// have not changed since the parent's last one: the same bytes, for a
// resource at rest every one of them. Decoding them was most of a steady
// sync's CPU once its caches had gone cold between syncs (docs/performance.md,
// "CPU per sync"). A Cache keeps what each object's exact bytes decoded
// into, so that a sync decodes only what changed.

// Cache holds decoded children, related objects and parents, keyed by their
// exact bytes: a value is what those bytes decode into, so a sync reading
// it from the Cache reads what decoding would have given. It is bounded in
// bytes (what its values hold, heapSize); when full, arbitrary entries make
// room, and a value over a sixty-fourth of the bound is never kept. Its
// values are shared by every sync that reads them and must not be changed
// (nothing the hook does with a Child, Related or Parent writes to it).
// Safe for concurrent use; the zero value is not: use NewCache.
type Cache struct {
	mu      sync.Mutex
	seeds   [2]maphash.Seed
	entries map[cacheKey]cacheEntry
	size    int // what the values hold (heapSize), and cacheEntryOverhead each
	max     int
}

// cacheKey names an object by what it decodes into and 128 bits of hash of
// its bytes under two random seeds (not chosen by anyone who writes an
// object, so a collision cannot be aimed at) and their length.
type cacheKey struct {
	typ    byte
	n      int
	h1, h2 uint64
}

type cacheEntry struct {
	v    any // a Child, a Related or a Parent, by value; nil for keyValid
	cost int
}

const (
	keyChild   byte = iota + 1 // decodes into a Child
	keyRelated                 // into a Related
	keyParent                  // into a Parent (Request.DecodeParent)
	keyBody                    // a whole request body within its budget: a *decodedBody
)

// cacheEntryOverhead is what an entry costs besides its object's bytes: the
// key, the map's slot and the boxed value's header.
const cacheEntryOverhead = 96

// NewCache returns an empty Cache of at most maxBytes.
func NewCache(maxBytes int) *Cache {
	return &Cache{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, entries: map[cacheKey]cacheEntry{}, max: maxBytes}
}

// Len and Size are the number of objects held and what they cost.
func (c *Cache) Len() int  { c.mu.Lock(); defer c.mu.Unlock(); return len(c.entries) }
func (c *Cache) Size() int { c.mu.Lock(); defer c.mu.Unlock(); return c.size }

func (c *Cache) key(typ byte, raw []byte) cacheKey {
	return cacheKey{typ: typ, n: len(raw), h1: maphash.Bytes(c.seeds[0], raw), h2: maphash.Bytes(c.seeds[1], raw)}
}

func (c *Cache) get(k cacheKey) (any, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	return e.v, ok
}

// put keeps v under k unless it is too large, making room first. It costs
// v's boxed copy and what v holds (heapSize).
func (c *Cache) put(k cacheKey, v any) {
	n := 0
	if v != nil {
		n = int(reflect.TypeOf(v).Size()) + heapSize(reflect.ValueOf(v))
	}
	c.putCost(k, v, n)
}

// putCost is put of what costs n bytes besides the entry itself.
func (c *Cache) putCost(k cacheKey, v any, n int) {
	cost := n + cacheEntryOverhead
	if cost > c.max/64 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[k]; ok {
		return
	}
	for old, e := range c.entries {
		if c.size+cost <= c.max {
			break
		}
		delete(c.entries, old)
		c.size -= e.cost
	}
	c.entries[k] = cacheEntry{v: v, cost: cost}
	c.size += cost
}

// decodeCached sets *v to what raw decodes into by decode: the Cache's
// value for raw, or decode's, which it keeps. A value decode refuses is
// not kept, and *v is then unset. A nil c decodes every time.
func decodeCached[T any](c *Cache, typ byte, raw []byte, v *T, decode func([]byte, *T) error) error {
	var k cacheKey
	if c != nil {
		k = c.key(typ, raw)
		if kept, ok := c.get(k); ok {
			*v = kept.(T)
			return nil
		}
	}
	var fresh T
	if err := decode(raw, &fresh); err != nil {
		return err
	}
	if c != nil {
		c.put(k, fresh)
	}
	*v = fresh
	return nil
}

// body returns what body decoded into when the same bytes were decoded
// within their budget before: a whole request at rest (Metacontroller
// resyncs it unchanged). It is shared: read it, never change it.
func (c *Cache) body(body []byte) (*decodedBody, cacheKey, bool) {
	k := c.key(keyBody, body)
	v, ok := c.get(k)
	if !ok {
		return nil, k, false
	}
	return v.(*decodedBody), k, true
}

// putBody keeps what the body of key k decoded into. It costs the parent's
// bytes, its maps and keys, and the copies of the objects' fields the maps
// hold, not what those point to: the objects' own entries hold that.
func (c *Cache) putBody(k cacheKey, h *decodedBody) {
	n := len(h.Parent) + groupsSize(h.children) + groupsSize(h.related)
	c.putCost(k, h, n)
}

// groupsSize is what the maps of objs hold besides what the objects' fields
// point to (an object that does not decode: its bytes too).
func groupsSize[T any](objs objects[T]) int {
	n := mapSize(len(objs), int(unsafe.Sizeof("")+unsafe.Sizeof(map[string]object[T]{})))
	for g, objs := range objs {
		n += len(g) + mapSize(len(objs), int(unsafe.Sizeof("")+unsafe.Sizeof(object[T]{})))
		for key, o := range objs {
			n += len(key) + len(o.raw)
		}
	}
	return n
}

// heapSize is about what v holds on the heap besides v itself: the bytes
// of its strings, the backing arrays of its slices, its maps, what its
// pointers point to, recursively (a *time.Location, shared by every
// time.Time, is not counted). Allocation size classes are not: it is a
// bound's measure, within some tens of percent (TestCacheIsBounded
// checks the Cache's bound against the heap).
func heapSize(v reflect.Value) int {
	switch v.Kind() {
	case reflect.String:
		return v.Len()
	case reflect.Slice:
		if v.IsNil() {
			return 0
		}
		n := v.Cap() * int(v.Type().Elem().Size())
		for i := range v.Len() {
			n += heapSize(v.Index(i))
		}
		return n
	case reflect.Map:
		if v.IsNil() {
			return 0
		}
		n := mapSize(v.Len(), int(v.Type().Key().Size()+v.Type().Elem().Size()))
		for it := v.MapRange(); it.Next(); {
			n += heapSize(it.Key()) + heapSize(it.Value())
		}
		return n
	case reflect.Pointer:
		if v.IsNil() || v.Type() == locationType {
			return 0
		}
		return int(v.Type().Elem().Size()) + heapSize(v.Elem())
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		return int(e.Type().Size()) + heapSize(e)
	case reflect.Struct:
		n := 0
		for i := range v.NumField() {
			n += heapSize(v.Field(i))
		}
		return n
	case reflect.Array:
		n := 0
		for i := range v.Len() {
			n += heapSize(v.Index(i))
		}
		return n
	}
	return 0
}

var locationType = reflect.TypeFor[*time.Location]()

// mapSize is about what a map of n entries of entry bytes each holds
// besides what they point to: its groups of eight slots, a control word
// each, at most seven eighths full, and its header.
func mapSize(n, entry int) int {
	return 48 + (n*8/7+1)*(entry+1)
}
