// Package errorpages serves stackdome's branded error pages for Traefik: the
// errors middleware's /_errors/{code} and the catch-all that answers 404 for
// everything else. Every answer is rendered once at start-up, is
// self-contained (no request leaves the page) and reflects nothing from the
// request except a request id that matched a strict pattern; a ?brand= only
// picks one of the brands rendered at start-up.
package errorpages

import (
	"net/http"
	"strconv"
	"strings"
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
// The pages carry stackdome's own brand; [NewBranded] draws others.
func New(observe Observer) (http.Handler, error) {
	return NewBranded(DefaultBrands(), observe)
}

// NewBranded is [New] with the brands of bs, which it checks
// ([Brands.Validate]) and renders, every brand every code, once. A request's
// ?brand=<name> (the query the errors Middleware of an app that picked a
// brand sends) picks the brand; a request naming none, or a brand bs does
// not hold, gets bs's default brand, never an error: the status and the
// JSON answer never depend on the brand.
func NewBranded(bs *Brands, observe Observer) (http.Handler, error) {
	if err := bs.Validate(); err != nil {
		return nil, err
	}
	byName, err := renderBrands(embedded, bs)
	if err != nil {
		return nil, err
	}
	def := bs.Default
	if def == "" {
		def = bs.Brands[0].Name
	}
	return &handler{brands: byName, answers: byName[def], observe: observe}, nil
}

type handler struct {
	brands  map[string]*answers // by brand name
	answers *answers            // the default brand's
	observe Observer
}

// brandAnswers are the answers of the brand the query names, or the
// default brand's. It reads the first brand= parameter of the raw query
// and compares it as it is: brand names are DNS labels, which no client
// needs to escape, so an escaped or unknown name is simply not a brand.
// It allocates nothing.
func (h *handler) brandAnswers(rawQuery string) *answers {
	for q := rawQuery; q != ""; {
		var kv string
		kv, q, _ = strings.Cut(q, "&")
		if name, ok := strings.CutPrefix(kv, "brand="); ok {
			if a := h.brands[name]; a != nil {
				return a
			}
			break
		}
	}
	return h.answers
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

	a := h.brandAnswers(r.URL.RawQuery).get(format, code)

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
