// Package errorpages serves stackdome's branded error pages for Traefik: the
// errors middleware's /_errors/{code} and the catch-all that answers 404 for
// everything else. Every answer is rendered once at start-up, is
// self-contained (no request leaves the page) and reflects nothing from the
// request except a request id that matched a strict pattern.
package errorpages

import (
	"net/http"
	"strconv"
)

// Observer learns of every answer: its status code and its format, "html" or
// "json". It is called once per answer, after the body is written, on the
// request's goroutine, so it must be safe for concurrent use and return fast.
type Observer func(code int, format string)

// New returns the handler for the error-page port. It renders every page
// once, and fails if a page is missing or does not render.
//
// The handler serves pages only. GET or HEAD /_errors/{code}, with code three
// digits from 400 to 599, answers that status; a code without a page of its
// own uses its family's design (4xx → 404, 5xx → 500) with its own code and
// reason phrase. Every other path and every other method answers 404: it is
// the catch-all, so /metrics, /healthz or /sync here are 404 pages too.
// The format comes from [NegotiateAll] over the Accept fields; HEAD gets the
// headers and no body. It never reads the request body. observe may be nil.
func New(observe Observer) (http.Handler, error) {
	t, err := render(embedded)
	if err != nil {
		return nil, err
	}
	return &handler{answers: t, observe: observe}, nil
}

type handler struct {
	answers *answers
	observe Observer
}

// Header values shared by every answer. Each slice has len == cap, so a
// wrapper that appends to one (Header.Add) gets a copy and never writes into
// these.
var (
	hdrVary        = []string{"Accept"}
	hdrCache       = []string{"no-store"}
	hdrNosniff     = []string{"nosniff"}
	hdrReferrer    = []string{"no-referrer"}
	hdrRobots      = []string{"noindex"}
	hdrContentHTML = []string{"text/html; charset=utf-8"}
	hdrContentJSON = []string{"application/json; charset=utf-8"}
	// The pages hold no script and load nothing: only the inline style block
	// and the data: favicon are allowed.
	hdrCSP = []string{"default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"}
)

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	code := http.StatusNotFound
	// Traefik's errors middleware always fetches the page with GET (it
	// forces the original status itself); the catch-all forwards any method,
	// and for those an unknown address is simply not found.
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if c, ok := pathCode(r.URL.Path); ok {
			code = c
		}
	}
	format := NegotiateAll(r.Header["Accept"])
	id := requestID(r.Header["X-Request-Id"])

	a := h.answers.get(format, code)

	hdr := w.Header()
	if format == HTML {
		hdr["Content-Type"] = hdrContentHTML
	} else {
		hdr["Content-Type"] = hdrContentJSON
	}
	if id == "" {
		hdr["Content-Length"] = a.bareLen
	} else {
		hdr["Content-Length"] = []string{strconv.Itoa(a.size(id))}
	}
	hdr["Vary"] = hdrVary
	hdr["Cache-Control"] = hdrCache
	hdr["X-Content-Type-Options"] = hdrNosniff
	hdr["Content-Security-Policy"] = hdrCSP
	hdr["Referrer-Policy"] = hdrReferrer
	hdr["X-Robots-Tag"] = hdrRobots
	w.WriteHeader(code)
	if r.Method != http.MethodHead {
		a.write(w, id)
	}
	if h.observe != nil {
		h.observe(code, format.String())
	}
}

// pathCode reads the code from "/_errors/{code}": exactly three ASCII digits
// from 400 to 599, so "0503", "+503", "503/" and "5o3" are not codes.
func pathCode(path string) (int, bool) {
	const prefix = "/_errors/"
	if len(path) != len(prefix)+3 || path[:len(prefix)] != prefix {
		return 0, false
	}
	code := 0
	for _, c := range []byte(path[len(prefix):]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		code = code*10 + int(c-'0')
	}
	if code < minCode || code > maxCode {
		return 0, false
	}
	return code, true
}

// requestID returns the X-Request-Id to show, or "" when there is none, when
// there are several, or when it does not match ^[A-Za-z0-9._-]{1,64}$. Those
// characters need no escaping in HTML text or JSON strings, which is what lets
// the pre-rendered answers take the id as is.
func requestID(values []string) string {
	if len(values) != 1 {
		return ""
	}
	id := values[0]
	if len(id) < 1 || len(id) > 64 {
		return ""
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return ""
		}
	}
	return id
}
