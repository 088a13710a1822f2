package e2e

import (
	"fmt"
	"sort"
	"testing"
)

// mergeKeys are the list-map keys Metacontroller's dynamic-apply guesses, in
// its order of precedence (metacontroller/metacontroller@v4.17.2 pkg/dynamic/apply/apply.go).
var mergeKeys = []string{"containerPort", "port", "mountPath", "name", "uid", "ip", "path"}

// firstLoop is firstMismatch as Metacontroller's default dynamic-apply sees a
// child: objects merge key by key, so a field the server adds is harmless; a
// list whose items all share a merge key merges item by item; any other list
// is replaced whole, so the stored list must equal the sent one exactly — a
// field the server defaults inside it (a volumeClaimTemplate's status, say)
// makes the merged object differ from the observed one on every sync, and
// Metacontroller updates the child every time.
func firstLoop(path string, want, got any) (string, string) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, fmt.Sprintf("sent an object, stored %s", describe(got))
		}
		for _, k := range sortedKeys(w) {
			gv, ok := g[k]
			if !ok {
				return joinPath(path, k), fmt.Sprintf("sent %s, not stored (pruned or dropped)", describe(w[k]))
			}
			if p, why := firstLoop(joinPath(path, k), w[k], gv); p != "" {
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
				if p, why := firstLoop(fmt.Sprintf("%s[%d]", path, i), w[i], g[i]); p != "" {
					return p, why
				}
			}
			return "", ""
		}
		if p, why := firstMismatch(path, want, got); p != "" {
			return p, why
		}
		if p, _ := firstMismatch(path, got, want); p != "" {
			return p, fmt.Sprintf("the server adds %v inside a list Metacontroller's dynamic-apply replaces whole", addedPaths(path, got, want))
		}
		return "", ""
	default:
		return firstMismatch(path, want, got)
	}
}

// addedPaths lists every leaf path of got that want lacks.
func addedPaths(path string, got, want any) []string {
	g, gok := got.(map[string]any)
	w, wok := want.(map[string]any)
	if gok && wok {
		var out []string
		for _, k := range sortedKeys(g) {
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

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func TestFirstLoop(t *testing.T) {
	cases := map[string]struct {
		want, got string
		path      string
	}{
		"server default in a keyed list is harmless": {
			`{"containers":[{"name":"app","readinessProbe":{"tcpSocket":{"port":80}}}]}`,
			`{"containers":[{"name":"app","readinessProbe":{"tcpSocket":{"port":80},"timeoutSeconds":1}}]}`, ""},
		"server default in an atomic list loops": {
			`{"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{}}]}`,
			`{"volumeClaimTemplates":[{"metadata":{"name":"data"},"spec":{},"status":{"phase":"Pending"}}]}`,
			"volumeClaimTemplates[0].status"},
		"normalized value in a keyed list": {
			`{"containers":[{"name":"app","resources":{"requests":{"cpu":"0.5"}}}]}`,
			`{"containers":[{"name":"app","resources":{"requests":{"cpu":"500m"}}}]}`,
			"containers[0].resources.requests.cpu"},
		"scalar list exact":    {`{"s":["500-599"]}`, `{"s":["500-599"]}`, ""},
		"object adds harmless": {`{"spec":{"a":1}}`, `{"spec":{"a":1,"b":2}}`, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var want, got any
			if err := decodeJSON([]byte(tc.want), &want); err != nil {
				t.Fatal(err)
			}
			if err := decodeJSON([]byte(tc.got), &got); err != nil {
				t.Fatal(err)
			}
			path, why := firstLoop("", want, got)
			if path != tc.path {
				t.Errorf("firstLoop = %q (%s), want %q", path, why, tc.path)
			}
		})
	}
}
