package errorpages

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// discard is a ResponseWriter that keeps nothing, so the benchmark measures
// the handler and not a recorder.
type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}

func BenchmarkServe(b *testing.B) {
	h := newTestHandler(b, nil)
	cases := map[string]http.Header{
		"html":    {"Accept": {browserAccept}},
		"html-id": {"Accept": {browserAccept}, "X-Request-Id": {"0f8fad5b-d9cb-469f-a165-70867728950e"}},
		"json":    {"Accept": {"application/json, text/plain, */*"}},
	}
	for name, header := range cases {
		b.Run(name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodGet, "/_errors/503", nil)
			r.Header = header
			w := &discard{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				h.ServeHTTP(w, r)
			}
		})
	}
}

// BenchmarkServeBranded is BenchmarkServe's html case for a brand named in
// the query (the errors Middleware of an app that picked one), and reports
// the bytes of pages each brand of testdata/brands.json holds in memory.
func BenchmarkServeBranded(b *testing.B) {
	bs := testBrands(b)
	h, err := NewBranded(bs, nil)
	if err != nil {
		b.Fatal(err)
	}
	held := 0
	for _, a := range h.(*handler).brands {
		for _, ans := range a[HTML] {
			held += len(ans.bare) + ans.withIDLen
		}
	}
	r := httptest.NewRequest(http.MethodGet, "/_errors/503?brand=northwind", nil)
	r.Header = http.Header{"Accept": {browserAccept}}
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.h)
		h.ServeHTTP(w, r)
	}
	b.ReportMetric(float64(held)/float64(len(bs.Brands)), "page-bytes/brand")
}
