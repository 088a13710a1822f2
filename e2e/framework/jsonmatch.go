// No build tag: the untagged tests of ./e2e (TestFirstMismatch,
// TestFirstLoop) run these in `make test`, and the tagged ones use them too.

package framework

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
)

// How a value the API server stored compares with the one sent: exactly
// (FirstMismatch), as Metacontroller's dynamic apply sees it (FirstLoop),
// and the JSON decoding both rely on.

// FirstMismatch returns the path of the first place where got does not hold
// want exactly, and what differs there; "" when want is a subset of got.
//
// Objects: every key of want must be in got with a matching value; extra keys
// in got are what the server adds (defaults, metadata) and are allowed.
// Arrays: same length, element by element. Scalars, including null, must be
// equal in type and in their JSON spelling, so 1 differs from 1.0 and "0.5"
// from "500m". Values are decoded with json.Number (see DecodeJSON).
//
// This is the check that stands for Metacontroller's: a field we send that the
// server stores differently is a child updated, or a status written, on every
// sync.
func FirstMismatch(path string, want, got any) (string, string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, fmt.Sprintf("sent an object, stored %s", describe(got))
		}
		for _, k := range slices.Sorted(maps.Keys(w)) {
			gv, ok := g[k]
			if !ok {
				return joinPath(path, k), fmt.Sprintf("sent %s, not stored (pruned or dropped)", describe(w[k]))
			}
			if p, why := FirstMismatch(joinPath(path, k), w[k], gv); p != "" {
				return p, why
			}
		}
		return "", ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			return path, fmt.Sprintf("sent an array, stored %s", describe(got))
		}
		if len(w) != len(g) {
			return path, fmt.Sprintf("sent %d items, stored %d", len(w), len(g))
		}
		for i := range w {
			if p, why := FirstMismatch(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); p != "" {
				return p, why
			}
		}
		return "", ""
	default:
		if !sameScalar(want, got) {
			return path, fmt.Sprintf("sent %s, stored %s", describe(want), describe(got))
		}
		return "", ""
	}
}

func sameScalar(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case json.Number:
		bn, ok := b.(json.Number)
		return ok && a == bn
	case string, bool:
		return a == b
	default:
		return false
	}
}

func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return fmt.Sprintf("%q", v)
	default:
		return fmt.Sprintf("%v", v)
	}
}

func joinPath(path, key string) string {
	if strings.ContainsAny(key, "./[]") {
		return fmt.Sprintf("%s[%q]", path, key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// DecodeJSON decodes with json.Number so integers stay distinguishable.
func DecodeJSON(data []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	return dec.Decode(v)
}

// mergeKeys are the list-map keys Metacontroller's dynamic-apply guesses, in
// its order of precedence (metacontroller/metacontroller@v4.17.2 pkg/dynamic/apply/apply.go).
var mergeKeys = []string{"containerPort", "port", "mountPath", "name", "uid", "ip", "path"}

// FirstLoop is FirstMismatch as Metacontroller's default dynamic-apply sees a
// child: objects merge key by key, so a field the server adds is harmless; a
// list whose items all share a merge key merges item by item; any other list
// is replaced whole, so the stored list must equal the sent one exactly — a
// field the server defaults inside it (a volumeClaimTemplate's status, say)
// makes the merged object differ from the observed one on every sync, and
// Metacontroller updates the child every time.
func FirstLoop(path string, want, got any) (string, string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, fmt.Sprintf("sent an object, stored %s", describe(got))
		}
		for _, k := range slices.Sorted(maps.Keys(w)) {
			gv, ok := g[k]
			if !ok {
				return joinPath(path, k), fmt.Sprintf("sent %s, not stored (pruned or dropped)", describe(w[k]))
			}
			if p, why := FirstLoop(joinPath(path, k), w[k], gv); p != "" {
				return p, why
			}
		}
		return "", ""
	case []any:
		g, ok := got.([]any)
		if !ok {
			return path, fmt.Sprintf("sent an array, stored %s", describe(got))
		}
		if len(w) != len(g) {
			return path, fmt.Sprintf("sent %d items, stored %d", len(w), len(g))
		}
		if key := listMapKey(w, g); key != "" {
			for i := range w {
				wk, gk := w[i].(map[string]any)[key], g[i].(map[string]any)[key]
				if !sameScalar(wk, gk) {
					return fmt.Sprintf("%s[%d].%s", path, i, key), fmt.Sprintf("sent %s, stored %s", describe(wk), describe(gk))
				}
				if p, why := FirstLoop(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); p != "" {
					return p, why
				}
			}
			return "", ""
		}
		if p, why := FirstMismatch(path, want, got); p != "" {
			return p, why
		}
		if p, _ := FirstMismatch(path, got, want); p != "" {
			return p, fmt.Sprintf("the server adds %v inside a list Metacontroller's dynamic-apply replaces whole", addedPaths(path, got, want))
		}
		return "", ""
	default:
		return FirstMismatch(path, want, got)
	}
}

// addedPaths lists every leaf path of got that want lacks.
func addedPaths(path string, got, want any) []string {
	g, gok := got.(map[string]any)
	w, wok := want.(map[string]any)
	if gok && wok {
		var out []string
		for _, k := range slices.Sorted(maps.Keys(g)) {
			if _, ok := w[k]; !ok {
				out = append(out, fmt.Sprintf("%s=%s", joinPath(path, k), describe(g[k])))
				continue
			}
			out = append(out, addedPaths(joinPath(path, k), g[k], w[k])...)
		}
		return out
	}
	gl, gok := got.([]any)
	wl, wok := want.([]any)
	if gok && wok && len(gl) == len(wl) {
		var out []string
		for i := range gl {
			out = append(out, addedPaths(fmt.Sprintf("%s[%d]", path, i), gl[i], wl[i])...)
		}
		return out
	}
	return nil
}

// listMapKey returns the merge key dynamic-apply would use for these lists,
// or "" when they are replaced whole.
func listMapKey(lists ...[]any) string {
	for _, key := range mergeKeys {
		all := true
		for _, l := range lists {
			for _, it := range l {
				m, ok := it.(map[string]any)
				if !ok {
					return ""
				}
				if _, ok := m[key]; !ok {
					all = false
				}
			}
		}
		if all {
			return key
		}
	}
	return ""
}

// DeepCopy copies decoded JSON.
func DeepCopy(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("copying JSON value: %v", err)) // decoded JSON always encodes
	}
	var out any
	if err := DecodeJSON(data, &out); err != nil {
		panic(err)
	}
	return out
}

// MustJSON is v as indented JSON, or as fmt prints it if it has none.
func MustJSON(v any) string {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

func ReadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := DecodeJSON(data, v); err != nil {
		return fmt.Errorf("decoding %s: %w", path, err)
	}
	return nil
}
