package hooks

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the hook server's Prometheus metrics.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	dials    *prometheus.CounterVec
	held     prometheus.Counter
	// admissionRefused counts requests answered 429 for want of hook
	// memory (a namespace past its share, or the budget full).
	admissionRefused prometheus.Counter
	// admissionHeld and admissionBudget are the bytes the requests in
	// flight hold of the hook memory budget, and the budget.
	admissionHeld, admissionBudget prometheus.Gauge
}

// NewMetrics registers the hook metrics with reg (nil: not registered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stackdome_hook_requests_total",
			Help: "Hook requests answered, by hook and HTTP status code.",
		}, []string{"hook", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "stackdome_hook_request_duration_seconds",
			Help:    "Time to answer a hook request, by hook.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"hook"}),
		dials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stackdome_hook_dial_jobs_total",
			Help: "Dial jobs the sync hook asked for, by whether the verifier took them.",
		}, []string{"result"}),
		held: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "stackdome_hook_syncs_held_total",
			Help: "Syncs answered 429 until a dial has landed: the one deciding a port check past its grace, or the first verdict of pods just turned ready (HeldError).",
		}),
		admissionRefused: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "stackdome_hook_admission_refused_total",
			Help: "Hook requests answered 429 for want of hook memory (--hook-memory): their namespace past its share, or the budget full (counted in stackdome_hook_requests_total{code=\"429\"} too).",
		}),
		admissionHeld: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "stackdome_hook_admission_bytes",
			Help: "Bytes the hook requests in flight hold of the hook memory budget, by admission's estimate (3.6 a body byte, 3 KiB an object).",
		}),
		admissionBudget: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "stackdome_hook_admission_budget_bytes",
			Help: "The hook memory budget (--hook-memory; half of GOMEMLIMIT by default); set once the first hook request arrives.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.duration, m.dials, m.held, m.admissionRefused, m.admissionHeld, m.admissionBudget)
	}
	return m
}
