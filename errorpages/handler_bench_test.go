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
