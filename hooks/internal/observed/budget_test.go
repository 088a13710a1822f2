package observed

import "testing"

// FuzzScanStr: scan.str, which jumps from quote to quote, ends a string
// where stepping through it byte by byte (an escape skipping the byte
// after it) ends it, and fails where that fails.
func FuzzScanStr(f *testing.F) {
	for _, s := range []string{`"a"`, `"a\"b"`, `"a\\"b"`, `"a\\\"b"`, `"\\\\"`, `"abc\`, `"abc`, `""`, `x`, `"\"`, `"é\u0022"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := scan{b: b}
		ok := s.str()
		wantI, wantOK := stepStr(b)
		if ok != wantOK || (ok && s.i != wantI) {
			t.Fatalf("str(%q) = %d, %v; stepping gives %d, %v", b, s.i, ok, wantI, wantOK)
		}
	})
}

// stepStr is scan.str as it was: one byte at a time.
func stepStr(b []byte) (int, bool) {
	if len(b) == 0 || b[0] != '"' {
		return 0, false
	}
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return len(b), false
}

// FuzzScanSkip: scan.skip ends a value where stepping through it byte by
// byte ends it, and fails where that fails: the bytes per object a budget
// counts are the same.
func FuzzScanSkip(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"}"}],"c":"\"]"}`, ` [1,2] `, `{"a":`, `"x"`, `17,`, `{"a":"b\\"}}`, `[[[]]`, `{}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s := scan{b: b}
		ok := s.skip()
		ref := scan{b: b}
		wantOK := stepSkip(&ref)
		if ok != wantOK || (ok && s.i != ref.i) {
			t.Fatalf("skip(%q) = %d, %v; stepping gives %d, %v", b, s.i, ok, ref.i, wantOK)
		}
	})
}

// stepSkip is scan.skip of an object or array as it was: one byte at a
// time; other values as skip.
func stepSkip(s *scan) bool {
	s.ws()
	if s.i >= len(s.b) || (s.b[s.i] != '{' && s.b[s.i] != '[') {
		return s.skip()
	}
	depth := 0
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case '"':
			if !s.str() {
				return false
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				s.i++
				return true
			}
		}
		s.i++
	}
	return false
}
