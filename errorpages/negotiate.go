package errorpages

// Format is the representation of an answer: an HTML page for people, a JSON
// envelope for everything else.
type Format int

const (
	// JSON is the default: {"error":{"code":N,"message":"…"}}.
	JSON Format = iota
	// HTML is the branded page, chosen only when the client asks for text/html.
	HTML
)

// String returns "json" or "html", the label an Observer receives.
func (f Format) String() string {
	if f == HTML {
		return "html"
	}
	return "json"
}

// maxAcceptScan bounds the bytes of Accept that negotiation reads. A browser
// sends about 150; anything past the cap is ignored, cut at a comma so that a
// range is never read half (cutting "text/html;q=0" to "text/html" would flip
// the answer).
const maxAcceptScan = 2048

// Negotiate picks the format for one Accept header value. It performs no I/O,
// never allocates, and reads at most the first 2 KiB of accept.
//
// HTML is chosen only when text/html is listed explicitly with q > 0 and no
// less than the q of an explicit application/json: a browser's
// "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" gets HTML
// (never XML); "*/*" alone, an empty value, axios's
// "application/json, text/plain, */*", "text/*" and "text/html;q=0" get JSON.
// A tie between text/html and application/json goes to HTML, since only a
// client that can render a page names text/html. Media types and parameter
// names are case-insensitive, whitespace around separators is ignored, and a
// range with a malformed q is ignored. When a request carries several Accept
// fields, use [NegotiateAll].
func Negotiate(accept string) Format {
	p := newPrefs()
	p.scan(accept)
	return p.format()
}

// NegotiateAll is [Negotiate] over every Accept field of a request, read as
// one comma-separated list (RFC 9110 §5.3); the 2 KiB cap applies to the sum.
func NegotiateAll(accepts []string) Format {
	p := newPrefs()
	for _, a := range accepts {
		p.scan(a)
	}
	return p.format()
}

// prefs accumulates the highest q, in thousandths, seen for each type that
// matters; -1 means not listed.
type prefs struct {
	html, json int
	budget     int // bytes of Accept still to be read
}

func newPrefs() prefs { return prefs{html: -1, json: -1, budget: maxAcceptScan} }

func (p *prefs) format() Format {
	if p.html > 0 && p.html >= p.json {
		return HTML
	}
	return JSON
}

func (p *prefs) scan(accept string) {
	if len(accept) > p.budget {
		cut := lastIndexByte(accept[:p.budget], ',')
		if cut < 0 {
			cut = 0
		}
		accept, p.budget = accept[:cut], 0
	} else {
		p.budget -= len(accept)
	}
	for len(accept) > 0 {
		var rng string
		rng, accept = cutByte(accept, ',')
		mt, params := cutByte(rng, ';')
		mt = trimOWS(mt)
		var dst *int
		switch {
		case equalFold(mt, "text/html"):
			dst = &p.html
		case equalFold(mt, "application/json"):
			dst = &p.json
		default:
			continue
		}
		q, ok := rangeQ(params)
		if ok && q > *dst {
			*dst = q
		}
	}
}

// rangeQ returns the weight of one media range from its parameters, in
// thousandths (1000 when absent), and false when the q is malformed.
func rangeQ(params string) (int, bool) {
	for len(params) > 0 {
		var param string
		param, params = cutByte(params, ';')
		name, value := cutByte(param, '=')
		if !equalFold(trimOWS(name), "q") {
			continue
		}
		return parseQ(trimOWS(value))
	}
	return 1000, true
}

// parseQ parses RFC 9110's qvalue: "0" ["." 0*3DIGIT] / "1" ["." 0*3("0")].
func parseQ(s string) (int, bool) {
	if len(s) == 0 || len(s) > 5 || (s[0] != '0' && s[0] != '1') {
		return 0, false
	}
	q := int(s[0]-'0') * 1000
	if len(s) == 1 {
		return q, true
	}
	if s[1] != '.' {
		return 0, false
	}
	scale := 100
	for i := 2; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		q += int(c-'0') * scale
		scale /= 10
	}
	if q > 1000 {
		return 0, false
	}
	return q, true
}

func cutByte(s string, sep byte) (before, after string) {
	for i := 0; i < len(s); i++ {
		if s[i] == sep {
			return s[:i], s[i+1:]
		}
	}
	return s, ""
}

func lastIndexByte(s string, c byte) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == c {
			return i
		}
	}
	return -1
}

func trimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// equalFold reports whether s equals the lower-case ASCII lower, ignoring
// ASCII case only (strings.EqualFold also folds Unicode, e.g. the Kelvin sign
// to "k", which no header may smuggle in).
func equalFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}
