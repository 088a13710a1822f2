package errorpages

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func newTestHandler(t testing.TB, observe Observer) http.Handler {
	t.Helper()
	h, err := New(observe)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return h
}

// serve answers one request in memory.
func serve(h http.Handler, method, target string, header http.Header) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		r.Header[k] = v
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

var acceptHTML = http.Header{"Accept": {browserAccept}}

var (
	themeRe    = regexp.MustCompile(`<body class="t-(\d+)">`)
	headlineRe = regexp.MustCompile(`<h1>([^<]*)</h1>`)
	bigCodeRe  = regexp.MustCompile(`<p class="code">([^<]*)</p>`)
	titleRe    = regexp.MustCompile(`<title>([^<]*)</title>`)
)

// page is what a visitor reads first on a rendered page.
type page struct {
	Status   int
	Theme    string
	Code     string
	Title    string
	Headline string
}

func readPage(w *httptest.ResponseRecorder) page {
	body := w.Body.String()
	find := func(re *regexp.Regexp) string {
		if m := re.FindStringSubmatch(body); m != nil {
			return m[1]
		}
		return ""
	}
	return page{Status: w.Code, Theme: find(themeRe), Code: find(bigCodeRe), Title: find(titleRe), Headline: find(headlineRe)}
}

func TestPages(t *testing.T) {
	h := newTestHandler(t, nil)
	want := map[string]page{
		"/_errors/404": {404, "404", "404", "404 Not Found", "This page could not be found"},
		"/_errors/500": {500, "500", "500", "500 Internal Server Error", "Something went wrong on our side"},
		"/_errors/502": {502, "502", "502", "502 Bad Gateway", "The service didn’t answer properly"},
		"/_errors/503": {503, "503", "503", "503 Service Unavailable", "Temporarily unavailable"},
		// Codes without a page: their family's design, their own code and reason.
		"/_errors/400": {400, "404", "400", "400 Bad Request", "Bad Request"},
		"/_errors/418": {418, "404", "418", "418 I&#39;m a teapot", "I&#39;m a teapot"},
		"/_errors/429": {429, "404", "429", "429 Too Many Requests", "Too Many Requests"},
		"/_errors/499": {499, "404", "499", "499 Client Error", "Client Error"},
		"/_errors/501": {501, "500", "501", "501 Not Implemented", "Not Implemented"},
		"/_errors/504": {504, "500", "504", "504 Gateway Timeout", "Gateway Timeout"},
		"/_errors/599": {599, "500", "599", "599 Server Error", "Server Error"},
	}
	got := map[string]page{}
	for target := range want {
		got[target] = readPage(serve(h, http.MethodGet, target, acceptHTML))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
}

// Every code from 400 to 599 answers with its own status, in both formats.
func TestEveryCodeAnswers(t *testing.T) {
	h := newTestHandler(t, nil)
	for code := 400; code <= 599; code++ {
		target := "/_errors/" + strconv.Itoa(code)
		w := serve(h, http.MethodGet, target, acceptHTML)
		if w.Code != code || !strings.Contains(w.Body.String(), `<p class="code">`+strconv.Itoa(code)+`</p>`) {
			t.Errorf("GET %s as html = %d, without its code on the page", target, w.Code)
		}
		w = serve(h, http.MethodGet, target, nil)
		if w.Code != code || !strings.HasPrefix(w.Body.String(), `{"error":{"code":`+strconv.Itoa(code)+`,`) {
			t.Errorf("GET %s as json = %d %q", target, w.Code, w.Body.String())
		}
	}
}

// The error-page port is exposed to the internet by Traefik's catch-all:
// everything that is not /_errors/{400..599} is a 404 page, including the
// paths other stackdome ports serve.
func TestCatchAll(t *testing.T) {
	h := newTestHandler(t, nil)
	targets := []string{
		"/", "/index.html", "/metrics", "/sync", "/customize", "/healthz", "/readyz", "/debug/pprof/",
		"/_errors", "/_errors/", "/_errors/600", "/_errors/399", "/_errors/000", "/_errors/abc",
		"/_errors/0503", "/_errors/+503", "/_errors/-503", "/_errors/503/", "/_errors/5030",
		"/_errors/50", "/_errors/5o3", "/_errors/503.html", "/_errors/%35%30", "/_ERRORS/503",
		"/x/_errors/503", "//_errors/503x", "/_errors/503%00", "/_errors/\u0665\u0660\u0663",
	}
	got := map[string]int{}
	want := map[string]int{}
	for _, target := range targets {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.URL.Path = target // some of these httptest.NewRequest would refuse to parse
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		got[target] = w.Code
		want[target] = http.StatusNotFound
	}
	// A query never changes the code.
	got["/_errors/503?code=500"] = serve(h, http.MethodGet, "/_errors/503?code=500", nil).Code
	want["/_errors/503?code=500"] = 503
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status by path (-want +got):\n%s", diff)
	}
}

func TestMethods(t *testing.T) {
	h := newTestHandler(t, nil)
	methods := []string{
		http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodTrace, http.MethodConnect, "PROPFIND", "BREW",
	}
	got := map[string]int{}
	want := map[string]int{}
	for _, m := range methods {
		for _, target := range []string{"/_errors/503", "/some/page"} {
			r := httptest.NewRequest(http.MethodGet, target, strings.NewReader("a body nobody reads"))
			r.Method = m
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			key := m + " " + target
			got[key] = w.Code
			want[key] = http.StatusNotFound
		}
	}
	// Only Traefik's page fetch (GET) and its HEAD twin answer the asked code.
	want["GET /_errors/503"] = 503
	want["HEAD /_errors/503"] = 503
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status by method (-want +got):\n%s", diff)
	}
}

// HEAD over a real connection: the same headers as GET, Content-Length the
// length of GET's body, and not one byte of body on the wire.
func TestHeadOnTheWire(t *testing.T) {
	srv := httptest.NewServer(newTestHandler(t, nil)) // listens on 127.0.0.1:0
	t.Cleanup(srv.Close)

	get, err := http.NewRequest(http.MethodGet, srv.URL+"/_errors/503", nil)
	if err != nil {
		t.Fatal(err)
	}
	get.Header.Set("Accept", "text/html")
	resp, err := srv.Client().Do(get)
	if err != nil {
		t.Fatal(err)
	}
	getBody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}

	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = io.WriteString(conn, "HEAD /_errors/503 HTTP/1.1\r\nHost: example.test\r\nAccept: text/html\r\nConnection: close\r\n\r\n")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(conn) // the server closes after the answer
	if err != nil {
		t.Fatal(err)
	}
	head, err := http.ReadResponse(bufio.NewReader(strings.NewReader(string(raw))), &http.Request{Method: http.MethodHead})
	if err != nil {
		t.Fatal(err)
	}
	_, afterHeaders, _ := strings.Cut(string(raw), "\r\n\r\n")

	type shape struct {
		Status        int
		ContentLength string
		ContentType   string
		Vary          string
		BodyBytes     int
	}
	want := shape{503, strconv.Itoa(len(getBody)), "text/html; charset=utf-8", "Accept", 0}
	got := shape{head.StatusCode, head.Header.Get("Content-Length"), head.Header.Get("Content-Type"), head.Header.Get("Vary"), len(afterHeaders)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("HEAD (-want +got):\n%s", diff)
	}
	if got, want := resp.Header.Get("Content-Length"), strconv.Itoa(len(getBody)); got != want {
		t.Errorf("GET Content-Length = %s, want %s", got, want)
	}
}

func TestHeaders(t *testing.T) {
	h := newTestHandler(t, nil)
	const csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
	common := map[string]string{
		"Vary":                    "Accept",
		"Cache-Control":           "no-store",
		"X-Content-Type-Options":  "nosniff",
		"Content-Security-Policy": csp,
		"Referrer-Policy":         "no-referrer",
		"X-Robots-Tag":            "noindex",
	}
	cases := map[string]struct {
		method, target string
		header         http.Header
		contentType    string
	}{
		"html":         {"GET", "/_errors/503", acceptHTML, "text/html; charset=utf-8"},
		"html with id": {"GET", "/_errors/502", http.Header{"Accept": {"text/html"}, "X-Request-Id": {"abc-123"}}, "text/html; charset=utf-8"},
		"json":         {"GET", "/_errors/500", nil, "application/json; charset=utf-8"},
		"json with id": {"GET", "/_errors/500", http.Header{"X-Request-Id": {"abc-123"}}, "application/json; charset=utf-8"},
		"catch-all":    {"POST", "/metrics", acceptHTML, "text/html; charset=utf-8"},
		"head":         {"HEAD", "/_errors/404", acceptHTML, "text/html; charset=utf-8"},
	}
	for name, c := range cases {
		w := serve(h, c.method, c.target, c.header)
		got := map[string]string{}
		for k := range w.Header() {
			got[k] = strings.Join(w.Header().Values(k), "|")
		}
		want := map[string]string{"Content-Type": c.contentType}
		for k, v := range common {
			want[k] = v
		}
		// Content-Length is the body's length; for HEAD the body GET would send.
		full := serve(h, http.MethodGet, c.target, c.header)
		want["Content-Length"] = strconv.Itoa(full.Body.Len())
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: headers (-want +got):\n%s", name, diff)
		}
	}
}

type envelopeJSON struct {
	Error struct {
		Code      int    `json:"code"`
		Message   string `json:"message"`
		RequestID string `json:"requestId"`
	} `json:"error"`
}

func TestJSON(t *testing.T) {
	h := newTestHandler(t, nil)
	tests := map[string]struct {
		target, requestID string
		want              string
	}{
		"503":         {"/_errors/503", "", `{"error":{"code":503,"message":"Service Unavailable"}}`},
		"503 with id": {"/_errors/503", "req-42.a_B", `{"error":{"code":503,"message":"Service Unavailable","requestId":"req-42.a_B"}}`},
		"catch-all":   {"/nowhere", "", `{"error":{"code":404,"message":"Not Found"}}`},
		"teapot":      {"/_errors/418", "", `{"error":{"code":418,"message":"I'm a teapot"}}`},
		"unnamed 5xx": {"/_errors/599", "x", `{"error":{"code":599,"message":"Server Error","requestId":"x"}}`},
	}
	got := map[string]string{}
	want := map[string]string{}
	for name, tt := range tests {
		header := http.Header{"Accept": {"application/json, text/plain, */*"}}
		if tt.requestID != "" {
			header.Set("X-Request-Id", tt.requestID)
		}
		w := serve(h, http.MethodGet, tt.target, header)
		var e envelopeJSON
		if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
			t.Errorf("%s: body is not JSON: %v", name, err)
		}
		got[name] = strings.TrimSuffix(w.Body.String(), "\n")
		want[name] = tt.want
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSON bodies (-want +got):\n%s", diff)
	}
}

func TestRequestID(t *testing.T) {
	h := newTestHandler(t, nil)
	shown := map[string]string{
		"simple":    "abc",
		"uuid":      "0f8fad5b-d9cb-469f-a165-70867728950e",
		"traefik":   "7f0e1a2b3c4d5e6f.1",
		"one char":  "x",
		"max 64":    strings.Repeat("a", 64),
		"all kinds": "Az09._-",
	}
	for name, id := range shown {
		for format, accept := range map[string]string{"html": "text/html", "json": "*/*"} {
			w := serve(h, http.MethodGet, "/_errors/500", http.Header{"Accept": {accept}, "X-Request-Id": {id}})
			wantFrag := `<code>` + id + `</code>`
			if format == "json" {
				wantFrag = `"requestId":"` + id + `"`
			}
			if !strings.Contains(w.Body.String(), wantFrag) {
				t.Errorf("%s (%s): id %q not shown", name, format, id)
			}
		}
	}

	// A hostile or malformed id is dropped: the answer is byte for byte the
	// one without an id, so nothing of it can be reflected.
	dropped := map[string][]string{
		"script":         {"<script>alert(1)</script>"},
		"double quote":   {`a"onmouseover="alert(1)`},
		"single quote":   {"a'b"},
		"ampersand":      {"a&amp;b"},
		"json breakout":  {`x","code":200,"y":"`},
		"backslash":      {`a\u003cb`},
		"space":          {"abc def"},
		"tab":            {"abc\tdef"},
		"slash":          {"../../etc/passwd"},
		"colon":          {"trace:1"},
		"percent":        {"%3Cscript%3E"},
		"unicode":        {"ünïcødé"},
		"rtl override":   {"abc\u202Edef"},
		"fullwidth less": {"\uFF1Cscript\uFF1E"},
		"65 chars":       {strings.Repeat("a", 65)},
		"very long":      {strings.Repeat("A", 64<<10)},
		"empty":          {""},
		"two values":     {"abc", "def"},
		"nul":            {"abc\x00"},
		"crlf":           {"abc\r\nSet-Cookie: x=1"},
	}
	for _, accept := range []string{"text/html", "*/*"} {
		for _, target := range []string{"/_errors/503", "/nowhere"} {
			bare := serve(h, http.MethodGet, target, http.Header{"Accept": {accept}})
			for name, ids := range dropped {
				w := serve(h, http.MethodGet, target, http.Header{"Accept": {accept}, "X-Request-Id": ids})
				if diff := cmp.Diff(bare.Body.String(), w.Body.String()); diff != "" {
					t.Errorf("%s %s (Accept %s): hostile id changed the answer (-bare +got):\n%s", name, target, accept, diff)
				}
				if diff := cmp.Diff(bare.Header(), w.Header()); diff != "" {
					t.Errorf("%s %s (Accept %s): hostile id changed the headers (-bare +got):\n%s", name, target, accept, diff)
				}
			}
		}
	}
}

// Nothing from the request other than a valid id reaches the answer: not the
// path, the host, the query or any other header.
func TestNothingReflected(t *testing.T) {
	h := newTestHandler(t, nil)
	const marker = "zq7marker"
	for _, accept := range []string{"text/html", "*/*"} {
		r := httptest.NewRequest(http.MethodGet, "/"+marker+"/page?"+marker+"="+marker, nil)
		r.Host = marker + ".example.test"
		r.Header.Set("Accept", accept)
		r.Header.Set("Referer", "/"+marker)
		r.Header.Set("User-Agent", marker)
		r.Header.Set("X-Forwarded-Host", marker)
		r.Header.Set("X-Original-Uri", "/"+marker)
		r.Header.Set("Cookie", "s="+marker)
		r.Header.Set("X-Trace-Id", marker)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if strings.Contains(w.Body.String(), marker) {
			t.Errorf("Accept %s: the request reached the body", accept)
		}
		for k, v := range w.Header() {
			if strings.Contains(strings.Join(v, ","), marker) {
				t.Errorf("Accept %s: the request reached header %s", accept, k)
			}
		}
	}
}

func TestObserver(t *testing.T) {
	type call struct {
		Code   int
		Format string
	}
	var mu sync.Mutex
	var got []call
	h := newTestHandler(t, func(code int, format string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, call{code, format})
	})
	serve(h, http.MethodGet, "/_errors/503", acceptHTML)
	serve(h, http.MethodGet, "/_errors/502", nil)
	serve(h, http.MethodHead, "/_errors/500", acceptHTML)
	serve(h, http.MethodPost, "/_errors/500", nil)
	serve(h, http.MethodGet, "/metrics", http.Header{"X-Request-Id": {"abc"}})
	want := []call{{503, "html"}, {502, "json"}, {500, "html"}, {404, "json"}, {404, "json"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("observed (-want +got):\n%s", diff)
	}
}
