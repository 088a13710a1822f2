package mcrequest

import (
	"encoding/json"
	"fmt"
)

// Object is a Kubernetes object as JSON decodes it: what Metacontroller
// holds (unstructured.Unstructured's content) and sends.
type Object = map[string]any

// ToObject converts a typed object (a k8s.io/api struct, a hook's child) or
// raw JSON to an Object by a JSON round trip, as the API server's storage
// would see it. It panics on a value that does not encode: a programmer error.
func ToObject(v any) Object {
	var b []byte
	switch x := v.(type) {
	case json.RawMessage:
		b = x
	case []byte:
		b = x
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			panic(fmt.Sprintf("mcrequest: encoding %T: %v", v, err))
		}
	}
	var o Object
	if err := json.Unmarshal(b, &o); err != nil {
		panic(fmt.Sprintf("mcrequest: decoding %T: %v", v, err))
	}
	return o
}

// Clone returns a deep copy of o.
func Clone(o Object) Object { return ToObject(o) }

// Meta returns o's metadata, creating it when absent.
func Meta(o Object) map[string]any {
	md, ok := o["metadata"].(map[string]any)
	if !ok {
		md = map[string]any{}
		o["metadata"] = md
	}
	return md
}

// Map returns the map at path under o, creating every missing level.
func Map(o map[string]any, path ...string) map[string]any {
	for _, k := range path {
		next, ok := o[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			o[k] = next
		}
		o = next
	}
	return o
}

// Lookup returns the map at path under o, nil when absent; unlike Map it
// changes nothing.
func Lookup(o map[string]any, path ...string) map[string]any {
	for _, k := range path {
		o, _ = o[k].(map[string]any)
	}
	return o
}

// Str returns the string at path under o, "" when absent.
func Str(o map[string]any, path ...string) string {
	var v any = o
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// Name and Namespace of an object.
func Name(o Object) string      { return Str(o, "metadata", "name") }
func Namespace(o Object) string { return Str(o, "metadata", "namespace") }
