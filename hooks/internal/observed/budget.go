package observed

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Budget bounds what one sync request may make the hook decode: decoding
// costs a multiple of the bytes it reads and a fixed amount per object, so a
// body under the size limit can still cost hundreds of MiB (a 9 MB request of
// minimal pods decoded into 549 MiB). Zero fields take the defaults of
// DefaultBudget.
type Budget struct {
	// ObjectsPerGroup bounds the objects of one group of children or of
	// related objects other than pods (a StackResource has a handful of
	// children; its related objects are the ConfigMaps, Secrets and
	// Middlewares its spec names, which the CRD bounds).
	ObjectsPerGroup int
	// BytesPerObject bounds the JSON of one child or related object. The
	// parent is bounded by the body limit alone: a spec past the CRD's
	// limits is answered as an invalid spec, in status (schema.Validate),
	// which a 413 would not say.
	BytesPerObject int
	// PodsPerSync bounds the related pods of one request.
	PodsPerSync int
}

// DefaultBudget is the budget of a request. BytesPerObject is 2 MiB, above
// the 1.5 MiB etcd stores at most by default (an object the API server holds
// fits, re-encoded by Metacontroller); ObjectsPerGroup 1,000, a hundred times
// the most a spec the CRD admits can relate of one kind; PodsPerSync 10,000,
// the largest app docs/performance.md measured.
var DefaultBudget = Budget{ObjectsPerGroup: 1000, BytesPerObject: 2 << 20, PodsPerSync: 10000}

// BudgetError is a request over its Budget: Budget names the exceeded field
// (objects per group, bytes per object, pods per sync), Where the object or
// group, Got what the request holds and Limit the budget.
type BudgetError struct {
	Budget     string
	Where      string
	Got, Limit int
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("request over budget: %s holds %d %s, over the budget of %d", e.Where, e.Got, e.Budget, e.Limit)
}

func (b Budget) withDefaults() Budget {
	if b.ObjectsPerGroup <= 0 {
		b.ObjectsPerGroup = DefaultBudget.ObjectsPerGroup
	}
	if b.BytesPerObject <= 0 {
		b.BytesPerObject = DefaultBudget.BytesPerObject
	}
	if b.PodsPerSync <= 0 {
		b.PodsPerSync = DefaultBudget.PodsPerSync
	}
	return b
}

// Check measures a sync request body against b before anything of it is
// decoded: one scan of the bytes that allocates nothing but a group's name
// written with escapes and a count per group. It returns a *BudgetError for
// the first budget the body exceeds, and nil for a body within budget and
// for one that is not JSON of the shape of a sync request at all (Decode
// then says why). It reads the fields as encoding/json will: top-level names
// without regard to case, group names exactly, a group given twice counted
// as one.
func (b Budget) Check(body []byte) error {
	_, err := b.Measure(body)
	return err
}

// Measure is Check, and the number of children and related objects the
// body holds (as far as it is of a sync request's shape).
func (b Budget) Measure(body []byte) (objects int, err error) {
	b = b.withDefaults()
	s := scan{b: body}
	if !s.open('{') {
		return 0, nil
	}
	counts := map[string]int{}
	total := func() int {
		n := 0
		for _, c := range counts {
			n += c
		}
		return n
	}
	for s.next('}') {
		key, ok := s.key()
		if !ok {
			return total(), nil
		}
		switch {
		case strings.EqualFold(key, "children"), strings.EqualFold(key, "related"):
			if ok, err := b.groups(&s, strings.ToLower(key), counts); !ok || err != nil {
				return total(), err
			}
		default:
			if !s.skip() {
				return total(), nil
			}
		}
	}
	return total(), nil
}

// groups checks one map of groups (children or related) at s; ok is false
// when the body is not of a sync request's shape.
func (b Budget) groups(s *scan, section string, counts map[string]int) (bool, error) {
	if s.null() {
		return true, nil
	}
	if !s.open('{') {
		return false, nil
	}
	for s.next('}') {
		group, ok := s.key()
		if !ok {
			return false, nil
		}
		if s.null() {
			continue
		}
		if !s.open('{') {
			return false, nil
		}
		pods := section == "related" && group == groupPod
		for s.next('}') {
			name, ok := s.key()
			if !ok {
				return false, nil
			}
			start := s.i
			if !s.skip() {
				return false, nil
			}
			if n := s.i - start; n > b.BytesPerObject {
				return true, &BudgetError{Budget: "bytes per object", Where: fmt.Sprintf("%s %s %q", section, clip(group), clip(name)), Got: n, Limit: b.BytesPerObject}
			}
			id := section + " " + group
			counts[id]++
			limit, what := b.ObjectsPerGroup, "objects per group"
			if pods {
				limit, what = b.PodsPerSync, "pods per sync"
			}
			if counts[id] > limit {
				return true, &BudgetError{Budget: what, Where: fmt.Sprintf("%s %s", section, clip(group)), Got: counts[id], Limit: limit}
			}
		}
	}
	return true, nil
}

// clip keeps a name from the request short enough for a one-line refusal.
func clip(s string) string {
	if len(s) > 64 {
		return s[:61] + "..."
	}
	return s
}

// scan walks JSON bytes without decoding them. Every method reports false
// (or stops) at bytes that are not JSON; it never reads past b.
type scan struct {
	b []byte
	i int
}

func (s *scan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// open consumes the byte c ('{' or '[') after white space.
func (s *scan) open(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// null consumes a null after white space.
func (s *scan) null() bool {
	s.ws()
	if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// next is the loop over an object's members: it consumes a comma between
// members, and reports false at the closing byte (consumed) or at bytes
// that are not JSON.
func (s *scan) next(end byte) bool {
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case end:
		s.i++
		return false
	case ',':
		s.i++
		s.ws()
	}
	return s.i < len(s.b) && s.b[s.i] == '"'
}

// key reads a member's name and its colon. A name written with escapes is
// decoded (the one allocation of a scan besides the counts).
func (s *scan) key() (string, bool) {
	start := s.i
	if !s.str() {
		return "", false
	}
	raw := s.b[start:s.i]
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != ':' {
		return "", false
	}
	s.i++
	for _, c := range raw {
		if c == '\\' {
			var k string
			if json.Unmarshal(raw, &k) != nil {
				return "", false
			}
			return k, true
		}
	}
	return string(raw[1 : len(raw)-1]), true
}

// str consumes a string at s.i. It jumps from quote to quote
// (bytes.IndexByte) rather than stepping through every byte: most of a sync
// request is strings (managedFields, annotations). A quote ends the string
// unless an odd run of backslashes escapes it.
func (s *scan) str() bool {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return false
	}
	s.i++
	for {
		j := bytes.IndexByte(s.b[s.i:], '"')
		if j < 0 {
			s.i = len(s.b)
			return false
		}
		q := s.i + j
		escaped := false
		for k := q - 1; k >= s.i && s.b[k] == '\\'; k-- {
			escaped = !escaped
		}
		s.i = q + 1
		if !escaped {
			return true
		}
	}
}

// structural marks the bytes skip stops at inside an object or array.
var structural = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true}

// skip consumes one value after white space: a string, an object or array
// to its matching close, or a literal or number up to the next delimiter.
func (s *scan) skip() bool {
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '"':
		return s.str()
	case '{', '[':
		// Most bytes here are none of the five it looks for: a table
		// says so in one load, and the index lives in a register.
		depth := 0
		b, i := s.b, s.i
		for i < len(b) {
			for i < len(b) && !structural[b[i]] {
				i++
			}
			if i == len(b) {
				break
			}
			switch b[i] {
			case '"':
				s.i = i
				if !s.str() {
					return false
				}
				i = s.i
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					s.i = i + 1
					return true
				}
			}
			i++
		}
		s.i = i
		return false
	default:
		start := s.i
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return s.i > start
			}
			s.i++
		}
		return s.i > start
	}
}
