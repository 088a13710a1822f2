package errorpages

import (
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestMetrics: every answer is counted under its own code and format,
// from many goroutines at once, and only the pairs served become series.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	p := NewMetrics(reg)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				p.Observe(404, "html")
				p.Observe(503, "json")
				p.Observe(599, "html")
				p.Observe(600, "json") // outside the kept range: counted all the same
			}
		})
	}
	wg.Wait()
	want := `
# HELP stackdome_error_pages_served_total Error pages answered, by status code and format (html or json).
# TYPE stackdome_error_pages_served_total counter
stackdome_error_pages_served_total{code="404",format="html"} 800
stackdome_error_pages_served_total{code="503",format="json"} 800
stackdome_error_pages_served_total{code="599",format="html"} 800
stackdome_error_pages_served_total{code="600",format="json"} 800
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "stackdome_error_pages_served_total"); err != nil {
		t.Error(err)
	}
}

// BenchmarkMetrics: counting a page allocates nothing once its pair was
// seen.
func BenchmarkMetrics(b *testing.B) {
	p := NewMetrics(prometheus.NewRegistry())
	b.ReportAllocs()
	for b.Loop() {
		p.Observe(404, "html")
	}
}
