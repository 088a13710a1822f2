package errorpages

import (
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the page server's Prometheus metrics: the error pages served,
// by status code and format (stackdome_error_pages_served_total). Its
// Observe is the Observer New and NewBranded take, so the page server's
// metrics are this package's, as the hook server's are hooks' and the
// verifier's portcheck's. The counter of a (code, format) pair
// is looked up in the vector once and kept: the page server answers every
// request of Traefik's catch-all and every 5xx of every app, and formatting
// the code and hashing the labels on each of them is CPU that, on cores
// shared with Traefik, Traefik's own requests lose (docs/performance.md).
// Only the pairs ever served become series. Safe for concurrent use.
type Metrics struct {
	vec  *prometheus.CounterVec
	kept [2][200]atomic.Pointer[prometheus.Counter] // [html, json][code-400]
}

// NewMetrics registers the page metrics with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	p := &Metrics{vec: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "stackdome_error_pages_served_total",
		Help: "Error pages answered, by status code and format (html or json).",
	}, []string{"code", "format"})}
	if reg != nil {
		reg.MustRegister(p.vec)
	}
	return p
}

// Observe counts one answer; it is an Observer.
func (p *Metrics) Observe(code int, format string) {
	f := 0
	if format != "html" {
		f = 1
	}
	if code < 400 || code >= 600 {
		p.vec.WithLabelValues(strconv.Itoa(code), format).Inc()
		return
	}
	slot := &p.kept[f][code-400]
	if c := slot.Load(); c != nil {
		(*c).Inc()
		return
	}
	c := p.vec.WithLabelValues(strconv.Itoa(code), format)
	slot.Store(&c)
	c.Inc()
}
