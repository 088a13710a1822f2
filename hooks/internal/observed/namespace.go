package observed

import "github.com/go-json-experiment/json/jsontext"

// ParentNamespace reads the namespace of a sync or customize request's
// parent from the start of its body, without decoding it: the member
// "parent" of the top-level object, its "metadata", its "namespace", named
// exactly as Metacontroller names them. Metacontroller sends the controller
// first and the parent next, its metadata near its start, so a few KiB of a
// body say it. ok is false while prefix ends before the answer, and for a
// body not of a request's shape; a parent without a namespace is ("", true).
func ParentNamespace(prefix []byte) (ns string, ok bool) {
	dec := newDecoder(prefix)
	defer freeDecoder(dec)
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return "", false
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return "", false
		}
		if tok.String() != "parent" {
			if dec.SkipValue() != nil {
				return "", false
			}
			continue
		}
		return member(dec, "metadata", func() (string, bool) {
			return member(dec, "namespace", func() (string, bool) {
				tok, err := dec.ReadToken()
				if err != nil || tok.Kind() != '"' {
					return "", false
				}
				return tok.String(), true
			})
		})
	}
	return "", false
}

// member finds name in the object dec is at and reads its value with read.
// An object without it, or null, reads as ("", true).
func member(dec *jsontext.Decoder, name string, read func() (string, bool)) (string, bool) {
	tok, err := dec.ReadToken()
	switch {
	case err != nil:
		return "", false
	case tok.Kind() == 'n':
		return "", true
	case tok.Kind() != '{':
		return "", false
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return "", false
		}
		if tok.String() == name {
			return read()
		}
		if dec.SkipValue() != nil {
			return "", false
		}
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return "", false
	}
	return "", true
}
