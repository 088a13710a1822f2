package observed

import (
	"bytes"
	"encoding/json"
	"strings"
)

// ParentNamespace reads the namespace of a sync or customize request's
// parent from the start of its body, without decoding it: the member
// "parent" of the top-level object (found as encoding/json finds it,
// without regard to case), its "metadata", its "namespace". Metacontroller
// sends the controller first and the parent next, its metadata near its
// start, so a few KiB of a body say it. ok is false while prefix ends
// before the answer, and for a body not of a request's shape; a parent
// without a namespace is ("", true).
func ParentNamespace(prefix []byte) (ns string, ok bool) {
	s := scan{b: prefix}
	if !s.open('{') {
		return "", false
	}
	for s.next('}') {
		key, ok := s.key()
		if !ok {
			return "", false
		}
		if !strings.EqualFold(key, "parent") {
			if !s.skip() {
				return "", false
			}
			continue
		}
		return s.field("metadata", func(s *scan) (string, bool) {
			return s.field("namespace", func(s *scan) (string, bool) {
				s.ws()
				start := s.i
				if !s.str() {
					return "", false
				}
				return unquote(s.b[start:s.i])
			})
		})
	}
	return "", false
}

// field finds name in the object at s (without regard to case; the first
// one given, which is all a prefix may show) and reads its value with read.
// An object without it, or null, reads as ("", true).
func (s *scan) field(name string, read func(*scan) (string, bool)) (string, bool) {
	if s.null() {
		return "", true
	}
	if !s.open('{') {
		return "", false
	}
	for first := true; ; first = false {
		s.ws()
		if s.i >= len(s.b) {
			return "", false
		}
		if s.b[s.i] == '}' {
			return "", true
		}
		if !first {
			if s.b[s.i] != ',' {
				return "", false
			}
			s.i++
			s.ws()
		}
		key, ok := s.key()
		if !ok {
			return "", false
		}
		if strings.EqualFold(key, name) {
			return read(s)
		}
		if !s.skip() {
			return "", false
		}
	}
}

// unquote is the string a JSON string literal raw says.
func unquote(raw []byte) (string, bool) {
	if !bytes.Contains(raw, []byte{'\\'}) {
		return string(raw[1 : len(raw)-1]), true
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	return v, true
}
