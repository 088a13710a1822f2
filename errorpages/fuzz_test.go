package errorpages

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// acceptSeeds are what real clients send plus hostile shapes: huge, many
// ranges, broken q values, separators only, control bytes.
var acceptSeeds = []string{
	"", "*/*", browserAccept, "application/json, text/plain, */*", "text/html;q=0", "text/html;q=0.001",
	"TEXT/HTML", "text/html;level=1;q=0", "text/html;q=1.0001", "text/html;q=", "text/html;q=-1", "text/html;q=1e3",
	";;;,,,", "\x00text/html", "text/html\r\n", "text/html;q=0," + strings.Repeat(" ", 3000) + "text/html",
	strings.Repeat("text/plain,", 300) + "text/html", strings.Repeat("a", 5000), "application/json;q=0, text/html;q=0.1",
}

// FuzzNegotiateAll checks the negotiation invariants on any pair of Accept
// fields: no panic; one field alone reads the same through Negotiate and
// NegotiateAll; two fields read as one comma-joined list (RFC 9110 §5.3)
// while under the scan cap; HTML only when text/html is actually named
// within the bytes read.
func FuzzNegotiateAll(f *testing.F) {
	for _, a := range acceptSeeds {
		f.Add(a, "")
		f.Add(a, "text/html;q=0.5")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		got := Negotiate(a)
		if all := NegotiateAll([]string{a}); all != got {
			t.Fatalf("Negotiate(%q) = %v, NegotiateAll of it = %v", a, got, all)
		}
		if got == HTML && !strings.Contains(strings.ToLower(prefix(a, maxAcceptScan)), "text/html") {
			t.Fatalf("Negotiate(%q) = HTML without text/html in the bytes read", a)
		}
		if len(a)+len(b)+1 <= maxAcceptScan {
			if two, one := NegotiateAll([]string{a, b}), Negotiate(a+","+b); two != one {
				t.Fatalf("fields %q and %q: %v, joined: %v", a, b, two, one)
			}
		}
	})
}

func prefix(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// FuzzPage sends any path, Accept and X-Request-Id to the page handler: the
// status is 404 or the code of a valid /_errors/ path, Content-Length is the
// body's length, and the request id reaches the answer only when it matches
// the strict pattern — otherwise the answer is exactly the one without an id.
func FuzzPage(f *testing.F) {
	for _, a := range acceptSeeds {
		f.Add("/_errors/503", a, "0f8fad5b-d9cb-469f-a165-70867728950e")
	}
	for _, s := range [][3]string{
		{"/_errors/404", browserAccept, "<script>alert(1)</script>"}, {"/_errors/0503", "", "a"}, {"/_errors/418", browserAccept, strings.Repeat("x", 65)},
		{"/", browserAccept, "\"}"}, {"/_errors/599", "", "id\r\nSet-Cookie: a=b"}, {"/_errors/5%30", "", "é"}, {"/_errors/600", "", ""},
	} {
		f.Add(s[0], s[1], s[2])
	}
	h, err := New(nil)
	if err != nil {
		f.Fatal(err)
	}
	get := func(path, accept string, id []string) *httptest.ResponseRecorder {
		r := &http.Request{Method: http.MethodGet, URL: &url.URL{Path: path}, Header: http.Header{"Accept": {accept}}}
		if id != nil {
			r.Header["X-Request-Id"] = id
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	f.Fuzz(func(t *testing.T, path, accept, id string) {
		w := get(path, accept, []string{id})
		want := http.StatusNotFound
		if c, err := strconv.Atoi(strings.TrimPrefix(path, "/_errors/")); err == nil && len(path) == len("/_errors/503") &&
			strings.HasPrefix(path, "/_errors/") && c >= 400 && c <= 599 && path[len("/_errors/")] != '+' && path[len("/_errors/")] != '-' {
			want = c
		}
		if w.Code != want {
			t.Fatalf("GET %q answered %d, want %d", path, w.Code, want)
		}
		if cl := w.Header().Get("Content-Length"); cl != strconv.Itoa(w.Body.Len()) {
			t.Fatalf("Content-Length %s for a body of %d bytes", cl, w.Body.Len())
		}
		if w.Header().Get("Vary") != "Accept" || w.Header().Get("Content-Security-Policy") == "" {
			t.Fatalf("headers missing: %v", w.Header())
		}
		bare := get(path, accept, nil)
		if idPattern.MatchString(id) {
			if !strings.Contains(w.Body.String(), id) {
				t.Fatalf("valid request id %q not shown", id)
			}
		} else if w.Body.String() != bare.Body.String() {
			t.Fatalf("request id %q changed the answer", id)
		}
	})
}
