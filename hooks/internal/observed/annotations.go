package observed

import "encoding/json"

// ChildMeta is an observed child's metadata: Meta, but with the
// annotations kept as they were sent. A child's annotations carry
// Metacontroller's last-applied configuration, the JSON of the whole child
// (kilobytes of escaped quotes, a third of what a steady sync decoded),
// which only an invalid spec reads (Request.LastApplied); kept as sent,
// they cost a copy instead of an unquoting.
type ChildMeta struct {
	Meta
	// Annotations shadows Meta.Annotations, which stays empty.
	Annotations Annotations `json:"annotations,omitempty"`
}

// Annotations are a JSON object of strings as sent, decoded when read. It
// accepts what encoding/json accepts as a map[string]string (null, or an
// object whose values are strings or null) and reads as that map would:
// null empties it, a second object adds to the first.
type Annotations struct {
	raws [][]byte // each object sent since the last null
}

// UnmarshalJSON keeps b, a valid JSON value, when it is null or an object
// of strings (or nulls); anything else is refused as encoding/json refuses
// it as a map[string]string.
func (a *Annotations) UnmarshalJSON(b []byte) error {
	s := scan{b: b}
	if s.null() {
		a.raws = nil
		return nil
	}
	if !stringObject(&s) {
		var m map[string]string
		return json.Unmarshal(b, &m)
	}
	a.raws = append(a.raws, append([]byte(nil), b...))
	return nil
}

// stringObject reports whether the valid JSON at s is an object whose
// values are all strings or null.
func stringObject(s *scan) bool {
	if !s.open('{') {
		return false
	}
	for s.next('}') {
		if !s.str() {
			return false
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		s.ws()
		if !s.null() && !s.str() {
			return false
		}
	}
	return true
}

// Get returns the annotation key and whether it is there.
func (a Annotations) Get(key string) (string, bool) {
	var m map[string]string
	for _, raw := range a.raws {
		if json.Unmarshal(raw, &m) != nil {
			return "", false // not reached: UnmarshalJSON checked it
		}
	}
	v, ok := m[key]
	return v, ok
}
