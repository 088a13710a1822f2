package errorpages

import (
	"bytes"
	"encoding/base64"
	"html"
	"image"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testBrands is errorpages/testdata/brands.json, the two brands of the
// browser test and of docs/errorpages.md.
func testBrands(t testing.TB) *Brands {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "brands.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bs, err := LoadBrands(f)
	if err != nil {
		t.Fatalf("LoadBrands(testdata/brands.json): %v", err)
	}
	return bs
}

func tinyPNG(t testing.TB, side int) string {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, side, side))); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// TestLoadBrandsRefuses: each wrong field is refused with its path in the
// file, so serve's start-up error says what to fix.
func TestLoadBrandsRefuses(t *testing.T) {
	const ok = `"name":"acme","displayName":"Acme"`
	big := strings.Repeat("<g/>", MaxLogoBytes/4)
	tests := map[string]struct {
		file string
		want string // the whole error; "" means valid
	}{
		"valid":                {file: `{"brands":[{` + ok + `}]}`},
		"valid png":            {file: `{"brands":[{` + ok + `,"logo":{"png":"` + tinyPNG(t, 4) + `"}}]}`},
		"no brand":             {file: `{"brands":[]}`, want: "brands: at least one brand is required"},
		"unknown field":        {file: `{"brands":[{` + ok + `,"colour":{}}]}`, want: `decoding the brand file: json: unknown field "colour"`},
		"name with markup":     {file: `{"brands":[{"name":"acme","displayName":"<b>Acme</b>"}]}`, want: `brands[0].displayName: "<b>Acme</b>" holds markup (< or >): plain text only`},
		"name too long":        {file: `{"brands":[{"name":"acme","displayName":"` + strings.Repeat("é", 65) + `"}]}`, want: "brands[0].displayName: is 65 characters, at most 64"},
		"no display name":      {file: `{"brands":[{"name":"acme"}]}`, want: "brands[0].displayName: is required"},
		"key not a DNS label":  {file: `{"brands":[{"name":"Acme Pay","displayName":"x"}]}`, want: `brands[0].name: "Acme Pay" must be a DNS label (lowercase letters, digits and '-', at most 63)`},
		"duplicate":            {file: `{"brands":[{` + ok + `},{` + ok + `}]}`, want: `brands[1].name: "acme" is a duplicate`},
		"default names none":   {file: `{"default":"other","brands":[{` + ok + `}]}`, want: `default: "other" names no brand`},
		"colour not a colour":  {file: `{"brands":[{` + ok + `,"colors":{"dark":{"accent":"red;background:url(x)"}}}]}`, want: `brands[0].colors.dark.accent: "red;background:url(x)" is not a colour (#rgb or #rrggbb)`},
		"colour name":          {file: `{"brands":[{` + ok + `,"colors":{"light":{"accent":"#abc","background":"white"}}}]}`, want: `brands[0].colors.light.background: "white" is not a colour (#rgb or #rrggbb)`},
		"palette sans accent":  {file: `{"brands":[{` + ok + `,"colors":{"light":{"background":"#fff"}}}]}`, want: "brands[0].colors.light.accent: is required"},
		"logo too large":       {file: `{"brands":[{` + ok + `,"logo":{"svg":"<svg>` + big + `</svg>"}}]}`, want: "brands[0].logo: svg is 4107 bytes, at most 4096"},
		"png too large":        {file: `{"brands":[{` + ok + `,"logo":{"png":"` + base64.StdEncoding.EncodeToString(append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, MaxLogoBytes)...)) + `"}}]}`, want: "brands[0].logo: png is 4104 bytes, at most 4096"},
		"png not a png":        {file: `{"brands":[{` + ok + `,"logo":{"png":"R0lGODlhAQABAAAAACw="}}]}`, want: "brands[0].logo: png is not a PNG file"},
		"svg and png":          {file: `{"brands":[{` + ok + `,"logo":{"svg":"<svg/>","png":"AAAA"}}]}`, want: "brands[0].logo: set svg or png, not both"},
		"svg with script":      {file: `{"brands":[{` + ok + `,"logo":{"svg":"<svg><script>alert(1)</script></svg>"}}]}`, want: "brands[0].logo: svg: holds a <script>"},
		"svg loading an image": {file: `{"brands":[{` + ok + `,"logo":{"svg":"<svg><image href='https://x.test/a.png'/></svg>"}}]}`, want: `brands[0].logo: svg: refers to "https://x.test/a.png": only #fragment references are allowed`},
		"svg handler":          {file: `{"brands":[{` + ok + `,"logo":{"svg":"<svg onload='x()'/>"}}]}`, want: "brands[0].logo: svg: holds an event handler onload"},
		"not svg":              {file: `{"brands":[{` + ok + `,"logo":{"svg":"<html/>"}}]}`, want: "brands[0].logo: svg: the root element is <html>, not <svg>"},
		"support javascript":   {file: `{"brands":[{` + ok + `,"support":{"url":"javascript:alert(1)"}}]}`, want: `brands[0].support.url: "javascript:alert(1)" is neither an https:// nor a mailto: URL`},
		"support quote":        {file: `{"brands":[{` + ok + `,"support":{"url":"https://x.test/\"onmouseover=x"}}]}`, want: `brands[0].support.url: "https://x.test/\"onmouseover=x" holds a character a URL cannot ('"')`},
		"page key":             {file: `{"brands":[{` + ok + `,"pages":{"200":{"title":"OK"}}}]}`, want: `brands[0].pages["200"]: the key must be a status code from 400 to 599`},
		"page markup":          {file: `{"brands":[{` + ok + `,"pages":{"503":{"text":"see <a href=x>here</a>"}}}]}`, want: `brands[0].pages["503"].text: "see <a href=x>here</a>" holds markup (< or >): plain text only`},
		"two wrong fields": {file: `{"brands":[{` + ok + `},{"name":"b","displayName":"B","colors":{"light":{"accent":"#12"}},"support":{"text":"a\u0000b"}}]}`,
			want: "brands[1].colors.light.accent: \"#12\" is not a colour (#rgb or #rrggbb)\nbrands[1].support.text: holds a control character"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := ""
			if _, err := LoadBrands(strings.NewReader(tc.file)); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("LoadBrands (-want +got):\n%s", diff)
			}
		})
	}
}

// NewBranded checks what it is given too: a Brands built in Go, not read
// from a file, cannot slip a colour past it.
func TestNewBrandedValidates(t *testing.T) {
	bs := &Brands{Brands: []Brand{{Name: "a", DisplayName: "A", Colors: &Colors{Light: &Palette{Accent: "expression(x)"}}}}}
	if _, err := NewBranded(bs, nil); err == nil || !strings.Contains(err.Error(), "brands[0].colors.light.accent") {
		t.Errorf("NewBranded = %v, want the colour refused", err)
	}
}

var (
	brandNameRe2 = regexp.MustCompile(`<div class="brand">(?:<img src="data:image/svg&#43;xml;base64,[A-Za-z0-9+/=&#;]+" alt="">|<svg [^>]*>.*?</svg>)([^<]*)</div>`)
	supportRe    = regexp.MustCompile(`<span>(?:<a href="([^"]*)">)?([^<]*)(?:</a>)?</span>\n</footer>`)
	accentRe     = regexp.MustCompile(`\n:root body\{--accent:(#[0-9a-f]+);`)
	darkAccentRe = regexp.MustCompile(`@media \(prefers-color-scheme:dark\)\{:root body\{--accent:(#[0-9a-f]+);`)
)

// brandedPage is what a visitor reads of the brand on a page.
type brandedPage struct {
	Status                 int
	Brand, Headline, Lead  string
	Support, SupportLink   string
	Accent, DarkAccent     string
	ContentType, CSP, Vary string
	Cache, Nosniff, Bytes  string
}

func readBranded(w interface {
	Result() *http.Response
}, body string) brandedPage {
	find := func(re *regexp.Regexp, i int) string {
		if m := re.FindStringSubmatch(body); m != nil {
			return html.UnescapeString(m[i])
		}
		return ""
	}
	h := w.Result().Header
	return brandedPage{
		Status: w.Result().StatusCode, Brand: find(brandNameRe2, 1), Headline: find(headlineRe, 1),
		Lead: find(regexp.MustCompile(`<p class="lead">([^<]*)</p>`), 1), Support: find(supportRe, 2), SupportLink: find(supportRe, 1),
		Accent: find(accentRe, 1), DarkAccent: find(darkAccentRe, 1), ContentType: h.Get("Content-Type"),
		CSP: h.Get("Content-Security-Policy"), Vary: h.Get("Vary"), Cache: h.Get("Cache-Control"), Nosniff: h.Get("X-Content-Type-Options"),
		Bytes: strconv.Itoa(len(body)),
	}
}

// TestBrandedPages: ?brand= picks the brand — its name, logo, colours,
// support line and its own copy for 503 — and every other request (no
// brand, an unknown one, an escaped one, a second brand= parameter) gets
// the default brand's page byte for byte; the headers are the unbranded
// ones; JSON never changes.
func TestBrandedPages(t *testing.T) {
	h, err := NewBranded(testBrands(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	plain := newTestHandler(t, nil)
	const csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	acme503 := brandedPage{Status: 503, Brand: "Acme Pay", Headline: "Payments are paused for a moment",
		Lead:    "Acme Pay is being updated. No payment is lost: anything you started is kept and finishes when we are back.",
		Support: "status.pay.example.com", SupportLink: "https://status.pay.example.com", Accent: "#0f766e", DarkAccent: "#2dd4bf",
		ContentType: "text/html; charset=utf-8", CSP: csp, Vary: "Accept", Cache: "no-store", Nosniff: "nosniff"}
	north503 := brandedPage{Status: 503, Brand: "Northwind Traders", Headline: "Temporarily unavailable",
		Lead:    "The service is down for maintenance or can’t take more requests right now. It should be back shortly.",
		Support: "Questions? Call +1 555 0100, 8am–8pm", Accent: "#c2410c", DarkAccent: "#fb923c",
		ContentType: "text/html; charset=utf-8", CSP: csp, Vary: "Accept", Cache: "no-store", Nosniff: "nosniff"}
	north404 := north503
	north404.Status, north404.Headline, north404.Lead = 404, "This page could not be found", "The address you followed doesn’t lead to anything here. The page may have moved or been removed, or the link may contain a typo."
	targets := map[string]brandedPage{
		"/_errors/503?brand=acme-pay":                 acme503,
		"/_errors/503?brand=northwind":                north503,
		"/_errors/404?brand=northwind":                north404,
		"/_errors/503?x=1&brand=northwind":            north503,
		"/_errors/503":                                acme503, // the file's default
		"/_errors/503?brand=nobody":                   acme503,
		"/_errors/503?brand=":                         acme503,
		"/_errors/503?brand=North%77ind":              acme503,
		"/_errors/503?brand=acme-pay&brand=northwind": acme503,
		"/_errors/503?brand=northwind%00":             acme503,
	}
	got := map[string]brandedPage{}
	bodies := map[string]string{}
	for target := range targets {
		w := serve(h, http.MethodGet, target, acceptHTML)
		body := w.Body.String()
		p := readBranded(w, body)
		bodies[target] = body
		p.Bytes = ""
		got[target] = p
		if bad := externalRefs(body, "https://status.pay.example.com"); len(bad) > 0 {
			t.Errorf("%s can load something: %v", target, bad)
		}
		if w.Header().Get("Content-Length") != strconv.Itoa(len(body)) {
			t.Errorf("%s: Content-Length %s for %d bytes", target, w.Header().Get("Content-Length"), len(body))
		}
	}
	if diff := cmp.Diff(targets, got); diff != "" {
		t.Errorf("branded pages (-want +got):\n%s", diff)
	}
	if bodies["/_errors/503?brand=nobody"] != bodies["/_errors/503?brand=acme-pay"] {
		t.Error("an unknown brand is not the default brand's page byte for byte")
	}
	// JSON, headers and the status never depend on the brand.
	for _, target := range []string{"/_errors/503?brand=acme-pay", "/_errors/503?brand=northwind", "/_errors/418?brand=nobody"} {
		bare := strings.Split(target, "?")[0]
		a, b := serve(h, http.MethodGet, target, nil), serve(plain, http.MethodGet, bare, nil)
		if a.Code != b.Code || a.Body.String() != b.Body.String() || !cmp.Equal(a.Header(), b.Header()) {
			t.Errorf("JSON of %s = %d %q %v, unbranded %d %q %v", target, a.Code, a.Body, a.Header(), b.Code, b.Body, b.Header())
		}
		ah, bh := serve(h, http.MethodGet, target, acceptHTML).Header(), serve(plain, http.MethodGet, bare, acceptHTML).Header()
		ah.Del("Content-Length")
		bh.Del("Content-Length")
		if !cmp.Equal(ah, bh) {
			t.Errorf("headers of %s differ from the unbranded page's: %v, %v", target, ah, bh)
		}
	}
	// A request id still reaches a branded page.
	if body := serve(h, http.MethodGet, "/_errors/502?brand=northwind", http.Header{"Accept": {"text/html"}, "X-Request-Id": {"req-42"}}).Body.String(); !strings.Contains(body, "<code>req-42</code>") || !strings.Contains(body, "Northwind Traders") {
		t.Error("the branded 502 does not show the request id and the brand")
	}
}

// Every brand field is escaped where it is drawn: what passes validation
// (quotes, ampersands, apostrophes) is text, never markup or a broken
// attribute.
func TestBrandFieldsEscaped(t *testing.T) {
	bs := &Brands{Brands: []Brand{{Name: "q", DisplayName: `Q&A "Corp" 'Ltd'`,
		Support: &Support{URL: "mailto:help@q.example?subject=a&body=b", Text: `Mail "help" & more`},
		Pages:   map[string]PageText{"500": {Title: `Oops & "sorry"`, Text: `It's {{.Code}} here`}}}}}
	h, err := NewBranded(bs, nil)
	if err != nil {
		t.Fatal(err)
	}
	body := serve(h, http.MethodGet, "/_errors/500", acceptHTML).Body.String()
	for _, want := range []string{
		`Q&amp;A &#34;Corp&#34; &#39;Ltd&#39;</div>`,
		`<a href="mailto:help@q.example?subject=a&amp;body=b">Mail &#34;help&#34; &amp; more</a>`,
		`<h1>Oops &amp; &#34;sorry&#34;</h1>`,
		`<p class="lead">It&#39;s {{.Code}} here</p>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if bad := externalRefs(body, "mailto:help@q.example?subject=a&amp;body=b"); len(bad) > 0 {
		t.Errorf("page can load something: %v", bad)
	}
}

// No branded page of any code can load anything, with or without an id.
func TestBrandedNoExternalReferences(t *testing.T) {
	h, err := NewBranded(testBrands(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, brand := range []string{"acme-pay", "northwind"} {
		for code := 400; code <= 599; code++ {
			body := serve(h, http.MethodGet, "/_errors/"+strconv.Itoa(code)+"?brand="+brand, http.Header{"Accept": {"text/html"}, "X-Request-Id": {"r-1"}}).Body.String()
			if bad := externalRefs(body, "https://status.pay.example.com"); len(bad) > 0 {
				t.Fatalf("%s page %d can load something: %v", brand, code, bad)
			}
		}
	}
}
