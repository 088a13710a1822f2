package observed

import (
	"encoding/json"
	"strings"
)

// The object-by-object decoding of a body written as Metacontroller writes
// one (Cache.decodeCanonical): a strict walk of the request's envelope —
// its members, the groups of children and related objects, their names —
// that hands each object's bytes to the Cache, and leaves every body it is
// not certain of to the one-pass decoder.

// decodeCanonical decodes body into one object by object, each from the
// Cache when its bytes were decoded before, and reports whether it could:
// body must be a sync request as Metacontroller writes one — an object
// whose members are named without escapes, parent, children, related and
// finalizing each once and in lower case, and nothing after it — and every
// object in it must decode. For anything else it reports false, one is left
// unspecified, and the one-pass decoder must read body instead: what it
// accepts, decodeCanonical accepts only when it is certain of the same
// values (FuzzFastDecode holds the two alike).
func (c *Cache) decodeCanonical(body []byte, one *onePass) bool {
	s := scan{b: body}
	if !s.open('{') {
		return false
	}
	var seen [4]bool // parent, children, related, finalizing
	for first := true; ; first = false {
		more, ok := s.member(first)
		if !ok {
			return false
		}
		if !more {
			break
		}
		key, ok := s.plainKey()
		if !ok {
			return false
		}
		field := -1
		for i, f := range [...]string{"parent", "children", "related", "finalizing"} {
			if strings.EqualFold(key, f) {
				field = i
			}
		}
		if field >= 0 && (seen[field] || key != strings.ToLower(key)) {
			return false // decoding reads it without regard to case, and merges a second
		}
		if field >= 0 {
			seen[field] = true
		}
		s.ws()
		start := s.i
		switch field {
		case 0: // parent
			if !s.skip() || !c.valid(s.b[start:s.i]) {
				return false
			}
			one.Parent = append(json.RawMessage(nil), s.b[start:s.i]...)
		case 1: // children
			m, ok := groups(c, &s, keyChild, func(raw []byte, v *Child) error { return unmarshalFast(raw, v) })
			if !ok {
				return false
			}
			one.Children = m
		case 2: // related
			m, ok := groups(c, &s, keyRelated, func(raw []byte, v *Related) error { return unmarshalFast(raw, v) })
			if !ok {
				return false
			}
			one.Related = m
		case 3: // finalizing
			switch {
			case s.literal("true"):
				one.Finalizing = true
			case s.literal("false"), s.literal("null"):
				one.Finalizing = false
			default:
				return false
			}
		default:
			// A field the hook does not read (Metacontroller's controller):
			// valid JSON is all decoding asks of it.
			if !s.skip() || !c.valid(s.b[start:s.i]) {
				return false
			}
		}
	}
	s.ws()
	return s.i == len(s.b)
}

// groups decodes the map of groups at s (children or related), each
// object of typ through the Cache, as decoding into a map of maps does: a
// group given as null is there, as a nil map.
func groups[T any](c *Cache, s *scan, typ byte, decode func([]byte, *T) error) (map[string]map[string]T, bool) {
	if s.literal("null") {
		return nil, true
	}
	if !s.open('{') {
		return nil, false
	}
	out := map[string]map[string]T{}
	for first := true; ; first = false {
		more, ok := s.member(first)
		if !ok {
			return nil, false
		}
		if !more {
			return out, true
		}
		group, ok := s.plainKey()
		if _, twice := out[group]; !ok || twice {
			return nil, false
		}
		if s.literal("null") {
			out[group] = nil
			continue
		}
		if !s.open('{') {
			return nil, false
		}
		objs := map[string]T{}
		for first := true; ; first = false {
			more, ok := s.member(first)
			if !ok {
				return nil, false
			}
			if !more {
				break
			}
			name, ok := s.plainKey()
			if _, twice := objs[name]; !ok || twice {
				return nil, false
			}
			s.ws()
			start := s.i
			if !s.skip() {
				return nil, false
			}
			var v T
			if decodeCached(c, typ, s.b[start:s.i], &v, decode) != nil {
				return nil, false
			}
			objs[name] = v
		}
		out[group] = objs
	}
}

// member is the loop over an object's members after its '{', strictly: it
// reports whether a member follows (at its name) or the object closed
// ('}', consumed); ok is false at anything else — a member after another
// without a comma, a comma before the close.
func (s *scan) member(first bool) (more, ok bool) {
	s.ws()
	if s.i >= len(s.b) {
		return false, false
	}
	if s.b[s.i] == '}' {
		s.i++
		return false, true
	}
	if !first {
		if s.b[s.i] != ',' {
			return false, false
		}
		s.i++
		s.ws()
	}
	return true, s.i < len(s.b) && s.b[s.i] == '"'
}

// plainKey reads a member's name and its colon when the name is written
// without escapes, control bytes or bytes outside ASCII, and reports false
// otherwise (such a name is for the one-pass decoder).
func (s *scan) plainKey() (string, bool) {
	start := s.i
	if !s.str() {
		return "", false
	}
	raw := s.b[start+1 : s.i-1]
	for _, b := range raw {
		if b == '\\' || b < 0x20 || b >= 0x80 {
			return "", false
		}
	}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return "", false
	}
	s.i++
	return string(raw), true
}

// literal consumes lit (true, false or null) after white space when a
// delimiter or the end follows it.
func (s *scan) literal(lit string) bool {
	s.ws()
	end := s.i + len(lit)
	if end > len(s.b) || string(s.b[s.i:end]) != lit {
		return false
	}
	if end < len(s.b) {
		switch s.b[end] {
		case ',', '}', ' ', '\t', '\n', '\r':
		default:
			return false
		}
	}
	s.i = end
	return true
}
