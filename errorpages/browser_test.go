//go:build browser

package errorpages

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

// chromiumPath is Debian's chromium; CI installs it with apt-get.
const chromiumPath = "/usr/bin/chromium"

// screenshotDir is where the pictures in docs/errorpages.md come from.
var screenshotDir = filepath.Join("..", "docs", "screenshots")

// TestBrowserPages opens every page in a real Chromium, in light and dark
// mode, with every request but the page's own refused, and checks that the
// page asked for nothing else, drew its code, and switched colours. The
// screenshots it saves are the ones docs/errorpages.md shows.
func TestBrowserPages(t *testing.T) {
	ctx := newBrowser(t)

	var mu sync.Mutex
	var served []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served = append(served, r.Method+" "+r.URL.Path)
		mu.Unlock()
		browserHandler(t).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
		t.Fatal(err)
	}

	backgrounds := map[string]string{"light": "rgb(244, 245, 248)", "dark": "rgb(11, 14, 20)"}

	type shot struct {
		code, scheme, file string
		width, height      int64
		mobile             bool
	}
	var shots []shot
	for _, code := range []string{"404", "500", "502", "503"} {
		for _, scheme := range []string{"light", "dark"} {
			shots = append(shots, shot{code, scheme, code + "-" + scheme + ".png", 1280, 800, false})
		}
	}
	shots = append(shots,
		shot{"503", "light", "503-phone-light.png", 390, 844, true},
		shot{"404", "dark", "404-phone-dark.png", 390, 844, true},
	)

	for _, s := range shots {
		t.Run(strings.TrimSuffix(s.file, ".png"), func(t *testing.T) {
			mu.Lock()
			served = nil
			mu.Unlock()

			target := srv.URL + "/_errors/" + s.code
			requests, blocked, png, got := openPage(t, ctx, srv.URL, target, s.scheme, s.width, s.height, s.mobile)

			// The browser made exactly one request, the page itself, and
			// the server saw exactly that one.
			if diff := cmp.Diff([]string{target}, requests); diff != "" {
				t.Errorf("requests the page made (-want +got):\n%s", diff)
			}
			if len(blocked) > 0 {
				t.Errorf("the page tried to load %v", blocked)
			}
			mu.Lock()
			if diff := cmp.Diff([]string{"GET /_errors/" + s.code}, served); diff != "" {
				t.Errorf("requests the server saw (-want +got):\n%s", diff)
			}
			mu.Unlock()

			want := pageLook{Code: s.code, Headline: true, Background: backgrounds[s.scheme], Overflows: false, RequestID: "req-7f3a9c2e", Brand: "stackdome"}
			got.Accent = "" // each design's own; the brands test checks a brand's
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("what the page looks like (-want +got):\n%s", diff)
			}
			if err := os.WriteFile(filepath.Join(screenshotDir, s.file), png, 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestBrowserBrands opens the 503 of the two brands of
// testdata/brands.json, light and dark, at a phone's width, every request
// but the page's own refused, as TestBrowserPages does: each draws its
// name, its inline logo (the CSP's img-src data: lets it through, and
// nothing else is asked for), its background and its accent. The
// screenshots are docs/errorpages.md's "Brands".
func TestBrowserBrands(t *testing.T) {
	ctx := newBrowser(t)
	h, err := NewBranded(testBrands(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var served []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		served = append(served, r.Method+" "+r.URL.RequestURI())
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
		t.Fatal(err)
	}
	want := map[string]pageLook{
		"acme-pay light":  {Brand: "Acme Pay", Background: "rgb(240, 253, 250)", Accent: "rgb(15, 118, 110)"},
		"acme-pay dark":   {Brand: "Acme Pay", Background: "rgb(4, 20, 26)", Accent: "rgb(45, 212, 191)"},
		"northwind light": {Brand: "Northwind Traders", Background: "rgb(255, 247, 237)", Accent: "rgb(194, 65, 12)"},
		"northwind dark":  {Brand: "Northwind Traders", Background: "rgb(20, 11, 5)", Accent: "rgb(251, 146, 60)"},
	}
	for name, w := range want {
		brand, scheme, _ := strings.Cut(name, " ")
		t.Run(brand+"-"+scheme, func(t *testing.T) {
			mu.Lock()
			served = nil
			mu.Unlock()
			target := srv.URL + "/_errors/503?brand=" + brand
			requests, blocked, png, got := openPage(t, ctx, srv.URL, target, scheme, 390, 844, true)
			// Chromium reports the inline logo as a request of a data: URL,
			// which never leaves the page: that one, and the page itself.
			var network, inline []string
			for _, r := range requests {
				if strings.HasPrefix(r, "data:") {
					inline = append(inline, r)
				} else {
					network = append(network, r)
				}
			}
			if diff := cmp.Diff([]string{target}, network); diff != "" {
				t.Errorf("requests the page made (-want +got):\n%s", diff)
			}
			if len(inline) != 1 || !logoSrcRe.MatchString(inline[0]) {
				t.Errorf("inline loads %.80q, want the one logo", inline)
			}
			if len(blocked) > 0 {
				t.Errorf("the page tried to load %v", blocked)
			}
			mu.Lock()
			if diff := cmp.Diff([]string{"GET /_errors/503?brand=" + brand}, served); diff != "" {
				t.Errorf("requests the server saw (-want +got):\n%s", diff)
			}
			mu.Unlock()
			w.Code, w.Headline, w.RequestID, w.Logo = "503", true, "req-7f3a9c2e", true
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("what the page looks like (-want +got):\n%s", diff)
			}
			if err := os.WriteFile(filepath.Join(screenshotDir, "brand-"+brand+"-503-phone-"+scheme+".png"), png, 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// pageLook is what a visitor sees, read from the rendered page.
type pageLook struct {
	Code       string // the big status code
	Headline   bool   // the h1 takes up space
	Background string // the body's computed background colour
	Overflows  bool   // the page is wider than the viewport
	RequestID  string // the id shown in the footer
	Brand      string // the brand's name at the top
	Logo       bool   // the brand's logo was decoded and drawn
	Accent     string // the big code's colour (the brand's accent)
}

var (
	handlerOnce sync.Once
	theHandler  http.Handler
	handlerErr  error
)

func browserHandler(t *testing.T) http.Handler {
	handlerOnce.Do(func() { theHandler, handlerErr = New(nil) })
	if handlerErr != nil {
		t.Errorf("New: %v", handlerErr)
		return http.NotFoundHandler()
	}
	return theHandler
}

// newBrowser starts Chromium with networking beyond loopback cut off: no
// background traffic, no QUIC, and every host name but 127.0.0.1 resolving
// to nothing. Without chromium the test skips, except under CI, where it fails.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI is set and %s is missing (apt-get install -y chromium): %v", chromiumPath, err)
		}
		if _, err := exec.LookPath("chromium"); err != nil {
			t.Skipf("no chromium at %s (apt-get install -y chromium)", chromiumPath)
		}
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.UserDataDir(t.TempDir()),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

// openPage loads target in a new tab with the colour scheme and viewport
// given, every request outside origin failed by Fetch interception, and
// returns every request the tab made, the ones it blocked, a screenshot, and
// what the page shows.
func openPage(t *testing.T, browser context.Context, origin, target, scheme string, width, height int64, mobile bool) (requests, blocked []string, png []byte, look pageLook) {
	t.Helper()
	tab, cancel := chromedp.NewContext(browser)
	defer cancel()
	// A limit for one page, set after the tab exists (a timeout on the first
	// Run would bound the browser; see chromedp.Run).
	if err := chromedp.Do(tab); err != nil {
		t.Fatal(err)
	}
	ctx, cancelTimeout := context.WithTimeout(tab, time.Minute)
	defer cancelTimeout()

	var mu sync.Mutex
	if err := chromedp.Listen(ctx, func(ev any) {
		if ev, ok := ev.(*network.EventRequestWillBeSent); ok {
			mu.Lock()
			requests = append(requests, ev.Request.URL)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}

	// Pause every request; let through only those for the test server.
	paused := chromedp.Events(ctx, fetch.RequestPaused)
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			if strings.HasPrefix(ev.Request.URL, origin+"/") {
				_, _ = chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
				continue
			}
			mu.Lock()
			blocked = append(blocked, ev.Request.URL)
			mu.Unlock()
			_, _ = chromedp.Call(ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
		}
	}()

	idle := chromedp.Events(ctx, cdppage.LifecycleEvent)
	opts := []chromedp.EmulateViewportOption{chromedp.EmulateScale(1)}
	if mobile {
		opts = []chromedp.EmulateViewportOption{chromedp.EmulateScale(2), chromedp.EmulateMobile}
	}
	err := chromedp.Do(ctx,
		call(network.Enable, network.EnableParams{}),
		call(fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}),
		call(cdppage.Enable, cdppage.EnableParams{}),
		call(cdppage.SetLifecycleEventsEnabled, cdppage.SetLifecycleEventsEnabledParams{Enabled: true}),
		call(network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"X-Request-Id": "req-7f3a9c2e"}}),
		call(emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		}),
		chromedp.EmulateViewport(width, height, opts...),
	)
	if err != nil {
		t.Fatalf("preparing the tab: %v", err)
	}
	nav, err := chromedp.Call(ctx, cdppage.Navigate, cdppage.NavigateParams{URL: target})
	if err != nil || nav.ErrorText != "" {
		t.Fatalf("loading %s: %v %s", target, err, nav.ErrorText)
	}
	// networkIdle of this navigation's document: Chromium saw no request
	// for 500 ms after the load, so a late request (a favicon, a lazy
	// image) would have been recorded. Events of the blank page the tab
	// opened with carry another loader id.
	for ev, err := range idle {
		if err != nil {
			t.Fatalf("waiting for network idle: %v", err)
		}
		if ev.Name == "networkIdle" && ev.LoaderID == nav.LoaderID {
			break
		}
	}

	look.Code, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".code").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	look.Headline, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector("h1").getBoundingClientRect().height > 0`))
	if err != nil {
		t.Fatal(err)
	}
	look.Background, err = chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`))
	if err != nil {
		t.Fatal(err)
	}
	look.Overflows, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`))
	if err != nil {
		t.Fatal(err)
	}
	look.RequestID, err = chromedp.Run(ctx, chromedp.Evaluate[string](`(document.querySelector("footer code") || {}).textContent || ""`))
	if err != nil {
		t.Fatal(err)
	}
	look.Brand, err = chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".brand").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	look.Logo, err = chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const i = document.querySelector(".brand img"); return !!i && i.complete && i.naturalWidth > 0 && i.getBoundingClientRect().height > 0 })()`))
	if err != nil {
		t.Fatal(err)
	}
	look.Accent, err = chromedp.Run(ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector(".code")).color`))
	if err != nil {
		t.Fatal(err)
	}
	png, err = chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return append([]string(nil), requests...), append([]string(nil), blocked...), png, look
}

// call makes an action of one protocol command whose result is not needed.
func call[P, R any](cmd cdp.Command[P, R], params P) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, cmd, params); err != nil {
			return fmt.Errorf("%s: %w", cmd.Method, err)
		}
		return nil
	})
}
