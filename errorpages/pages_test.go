package errorpages

import (
	"flag"
	"html"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.html from the pages")

// The rendered pages are reviewed like code: `go test ./errorpages -update`
// rewrites testdata/<code>.golden.html and the diff shows what visitors see.
func TestGolden(t *testing.T) {
	h := newTestHandler(t, nil)
	for _, code := range []int{404, 500, 502, 503, 418, 504} {
		name := strconv.Itoa(code)
		w := serve(h, http.MethodGet, "/_errors/"+name, http.Header{"Accept": {"text/html"}, "X-Request-Id": {"req-7f3a.1"}})
		path := filepath.Join("testdata", name+".golden.html")
		if *update {
			if err := os.MkdirAll("testdata", 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, w.Body.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./errorpages -update)", err)
		}
		if diff := cmp.Diff(string(want), w.Body.String()); diff != "" {
			t.Errorf("page %d differs from %s (-want +got):\n%s", code, path, diff)
		}
	}
}

var (
	// attrRe finds every attribute of every tag; tagRe every tag name.
	tagRe   = regexp.MustCompile(`<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s=>/]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>"']+))?)*)\s*/?>`)
	attrRe  = regexp.MustCompile(`([^\s=>/]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s>"']+))?`)
	styleRe = regexp.MustCompile(`(?s)<style>(.*?)</style>`)
	// logoSrcRe is the only src an <img> may have: a logo as logoURL makes it.
	logoSrcRe = regexp.MustCompile(`^data:image/(svg\+xml|png);base64,[A-Za-z0-9+/]+=*$`)
)

// Attributes that make a browser fetch or navigate somewhere.
var urlAttrs = map[string]bool{
	"src": true, "href": true, "srcset": true, "action": true, "formaction": true, "poster": true,
	"data": true, "background": true, "cite": true, "manifest": true, "ping": true, "xlink:href": true,
	"longdesc": true, "lowsrc": true, "dynsrc": true, "codebase": true, "archive": true, "icon": true,
}

// Tags that fetch, run or embed something, or redirect the page; none may
// appear. (The favicon <link> and a brand's logo <img> of a data: URL are
// checked separately.)
var forbiddenTags = map[string]bool{
	"script": true, "iframe": true, "frame": true, "object": true, "embed": true,
	"image": true, "picture": true, "source": true, "video": true, "audio": true, "track": true,
	"base": true, "form": true, "applet": true, "portal": true, "use": true, "foreignobject": true,
	"input": true, "button": true, "template": true, "noscript": true,
}

// externalRefs lists every way body could make a request of its own. It is
// an HTML tokenizer kept to what html/template emits, strict enough to fail
// on anything it does not understand. links are the hrefs of <a> a visitor
// may follow (a brand's support link): navigation, never a load.
func externalRefs(body string, links ...string) []string {
	var bad []string
	for _, l := range links {
		body = strings.ReplaceAll(body, `<a href="`+l+`">`, `<a href="">`)
	}
	lower := strings.ToLower(body)
	for _, s := range []string{"http:", "https:", "//", "ftp:", "file:", "javascript:", "blob:", "filesystem:"} {
		// "//" may only appear nowhere: no comment, no protocol-relative URL.
		if strings.Contains(lower, s) {
			bad = append(bad, "contains "+strconv.Quote(s))
		}
	}
	for _, m := range tagRe.FindAllStringSubmatch(body, -1) {
		tag := strings.ToLower(m[1])
		if forbiddenTags[tag] {
			bad = append(bad, "tag <"+tag+">")
		}
		attrs := map[string]string{}
		for _, a := range attrRe.FindAllStringSubmatch(m[2], -1) {
			name := strings.ToLower(a[1])
			value := html.UnescapeString(strings.Trim(a[2], `"'`))
			attrs[name] = value
			if strings.HasPrefix(name, "on") {
				bad = append(bad, "event handler "+name)
			}
			if name == "style" {
				bad = append(bad, "inline style attribute")
			}
			if name == "http-equiv" {
				bad = append(bad, "meta http-equiv")
			}
		}
		for name, value := range attrs {
			if !urlAttrs[name] {
				continue
			}
			switch {
			case tag == "a" && name == "href" && (value == "" || value == "/"):
				// Same-document reload and the site's root: navigation the
				// visitor chooses, never a load of the page's own.
			case tag == "link" && name == "href" && attrs["rel"] == "icon" && strings.HasPrefix(value, "data:image/svg+xml,"):
				// The favicon, inline; without it the browser would ask for /favicon.ico.
			case tag == "img" && name == "src" && logoSrcRe.MatchString(value):
				// A brand's logo, inline: base64 only, so nothing in it is read as markup.
			default:
				bad = append(bad, tag+" "+name+"="+strconv.Quote(value))
			}
		}
		if tag == "link" && attrs["rel"] != "icon" {
			bad = append(bad, "link rel="+attrs["rel"])
		}
	}
	for _, m := range styleRe.FindAllStringSubmatch(body, -1) {
		css := strings.ToLower(m[1])
		for _, s := range []string{"url(", "@import", "image-set(", "@font-face", "src:", "image(", "element(", "\\"} {
			if strings.Contains(css, s) {
				bad = append(bad, "css "+strconv.Quote(s))
			}
		}
	}
	if n := strings.Count(strings.ToLower(body), "<style"); n != 1 {
		bad = append(bad, strconv.Itoa(n)+" style blocks")
	}
	return bad
}

func TestExternalRefsCatches(t *testing.T) {
	hostile := map[string]string{
		"script":          `<script>1</script>`,
		"img":             `<img src="x.png">`,
		"protocol rel":    `<a href="//evil.test/">x</a>`,
		"https link":      `<a href='https://evil.test/'>x</a>`,
		"stylesheet":      `<link rel="stylesheet" href="/a.css">`,
		"css url":         `<style>body{background:url(/x.png)}</style>`,
		"css import":      `<style>@import "x.css";</style>`,
		"escaped css":     `<style>body{background:u\72l(x)}</style>`,
		"font face":       `<style>@font-face{font-family:x;src:local(x)}</style>`,
		"favicon by url":  `<link rel="icon" href="/favicon.ico">`,
		"unquoted src":    `<iframe src=x></iframe>`,
		"refresh":         `<meta http-equiv="refresh" content="0;url=x">`,
		"handler":         `<p onclick="x()">`,
		"relative href":   `<a href="other">x</a>`,
		"svg use":         `<svg><use href="#x"/></svg>`,
		"img by data url": `<img src="data:image/gif,GIF89a">`,
		"img srcset":      `<img src="data:image/png;base64,AAAA" srcset="x.png 2x">`,
	}
	for name, html := range hostile {
		if len(externalRefs(html)) == 0 {
			t.Errorf("%s: externalRefs found nothing in %s", name, html)
		}
	}
}

// No page can make the browser load anything: no URL scheme, no
// protocol-relative URL, no src, no stylesheet, no url() or @import in CSS.
func TestNoExternalReferences(t *testing.T) {
	h := newTestHandler(t, nil)
	for code := 400; code <= 599; code++ {
		for _, id := range []string{"", "req-1"} {
			header := http.Header{"Accept": {"text/html"}}
			if id != "" {
				header.Set("X-Request-Id", id)
			}
			body := serve(h, http.MethodGet, "/_errors/"+strconv.Itoa(code), header).Body.String()
			if bad := externalRefs(body); len(bad) > 0 {
				t.Errorf("page %d (id %q) can load something: %v", code, id, bad)
			}
			if !strings.HasPrefix(body, "<!doctype html>") || !strings.HasSuffix(body, "</html>\n") {
				t.Errorf("page %d is not a whole document", code)
			}
		}
	}
	// The templates themselves, before rendering, too.
	err := fs.WalkDir(embedded, "pages", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(embedded, path)
		if err != nil {
			return err
		}
		for _, s := range []string{"http:", "https:", "//"} {
			if strings.Contains(strings.ToLower(string(b)), s) {
				t.Errorf("%s contains %q", path, s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The favicon's SVG namespace is percent-encoded so that the page holds no
// "http:" — and decodes to the real namespace, or browsers would not draw it.
func TestFaviconNamespace(t *testing.T) {
	body := serve(newTestHandler(t, nil), http.MethodGet, "/_errors/503", acceptHTML).Body.String()
	m := regexp.MustCompile(`<link rel="icon" href="data:image/svg\+xml,([^"]*)">`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no favicon link")
	}
	decoded, err := urlUnescape(m[1])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(decoded, `<svg xmlns='http://www.w3.org/2000/svg'`) {
		t.Errorf("favicon decodes to %q, without the SVG namespace", decoded)
	}
}

func urlUnescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", strconv.ErrSyntax
		}
		n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", err
		}
		b.WriteByte(byte(n))
		i += 2
	}
	return b.String(), nil
}

func pagesFS(t *testing.T, drop string, replace map[string]string) fs.FS {
	t.Helper()
	m := fstest.MapFS{}
	err := fs.WalkDir(embedded, "pages", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path == drop {
			return err
		}
		b, err := fs.ReadFile(embedded, path)
		m[path] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for path, text := range replace {
		m[path] = &fstest.MapFile{Data: []byte(text)}
	}
	return m
}

func TestRenderFails(t *testing.T) {
	tests := map[string]struct {
		fsys    fs.FS
		wantErr string
	}{
		"missing 503":    {pagesFS(t, "pages/503.html", nil), "parsing page 503"},
		"missing 404":    {pagesFS(t, "pages/404.html", nil), "parsing page 404"},
		"missing layout": {pagesFS(t, "pages/layout.html", nil), "parsing the page layout"},
		"syntax error":   {pagesFS(t, "", map[string]string{"pages/502.html": `{{define "headline"}}{{.Code}`}), "parsing page 502"},
		"execute error":  {pagesFS(t, "", map[string]string{"pages/500.html": `{{define "headline"}}{{.Nope}}{{end}}`}), "rendering page 500"},
		"id slot lost":   {pagesFS(t, "", map[string]string{"pages/layout.html": `<p>{{.Code}}</p>`}), "request id slot missing"},
	}
	got := map[string]string{}
	want := map[string]string{}
	for name, tt := range tests {
		_, err := render(tt.fsys, DefaultBrands().Brands[0])
		got[name] = "no error"
		if err != nil && strings.Contains(err.Error(), tt.wantErr) {
			got[name] = tt.wantErr
		} else if err != nil {
			got[name] = err.Error()
		}
		want[name] = tt.wantErr
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("render errors (-want +got):\n%s", diff)
	}
	if _, err := render(embedded, DefaultBrands().Brands[0]); err != nil {
		t.Errorf("render(embedded) = %v", err)
	}
}

// pageBudget keeps a page and its headers within net/http's 4 KiB connection
// buffer, so an answer leaves in one write instead of two (see "Benchmark
// against nginx" in docs/errorpages.md).
const pageBudget = 3584

func TestPageBudget(t *testing.T) {
	h := newTestHandler(t, nil)
	for code := 400; code <= 599; code++ {
		w := serve(h, http.MethodGet, "/_errors/"+strconv.Itoa(code), http.Header{"Accept": {"text/html"}})
		if w.Body.Len() > pageBudget {
			t.Errorf("page %d is %d bytes, over the %d-byte budget", code, w.Body.Len(), pageBudget)
		}
	}
}
