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
