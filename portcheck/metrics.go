package portcheck

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Refusal reasons, the values of the reason label of
// stackdome_portcheck_enqueue_refusals_total.
const (
	refusedPending   = "pending"    // a dial for the key is queued or in flight
	refusedQueueFull = "queue_full" // the bounded queue has no room
	refusedStopped   = "stopped"    // Run has returned
	refusedBackoff   = "backoff"    // the last verdict was inconclusive and its backoff has not passed
)

// metrics are the verifier's collectors. Label children are resolved once
// here so that the hot paths only do atomic adds and never allocate.
type metrics struct {
	dialOpen, dialClosed, dialInconclusive   prometheus.Counter
	latency                                  prometheus.Histogram
	inFlight                                 prometheus.Gauge
	undialed                                 prometheus.Counter
	enqueued                                 prometheus.Counter
	refusedPending, refusedFull, refusedStop prometheus.Counter
	refusedBackoff                           prometheus.Counter
	evictedFull                              prometheus.Counter

	collectors []prometheus.Collector
}

func newMetrics(queueDepth, cached func() float64) *metrics {
	const ns, sub = "stackdome", "portcheck"
	dials := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "dials_total",
		Help: "TCP dials by outcome: open, closed (connection refused), inconclusive (anything else).",
	}, []string{"outcome"})
	refusals := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: ns, Subsystem: sub, Name: "enqueue_refusals_total",
		Help: "Jobs refused by Enqueue, by reason: pending (single flight), queue_full, backoff (redial of an inconclusive verdict too soon), stopped.",
	}, []string{"reason"})
	m := &metrics{
		dialOpen:         dials.WithLabelValues("open"),
		dialClosed:       dials.WithLabelValues("closed"),
		dialInconclusive: dials.WithLabelValues("inconclusive"),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: sub, Name: "dial_duration_seconds",
			Help:    "Time one TCP connect took, whatever its outcome.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 8), // 0.5ms … 8s
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "dials_in_flight",
			Help: "TCP dials in progress; never more than the worker count.",
		}),
		undialed: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "undialed_ports_total",
			Help: "Declared ports reported Inconclusive without a dial: pod IP outside the allowed pod CIDRs (Config.Allow) or never dialable (loopback, link-local, metadata), or a malformed IP or port.",
		}),
		enqueued: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "enqueued_total",
			Help: "Jobs accepted by Enqueue.",
		}),
		refusedPending: refusals.WithLabelValues(refusedPending),
		refusedFull:    refusals.WithLabelValues(refusedQueueFull),
		refusedStop:    refusals.WithLabelValues(refusedStopped),
		refusedBackoff: refusals.WithLabelValues(refusedBackoff),
		evictedFull: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "evicted_full_total",
			Help: "Results evicted because Config.MaxEntries were held (the least recently read); those resources are dialed again as if never verified.",
		}),
	}
	m.collectors = []prometheus.Collector{
		dials, refusals, m.latency, m.inFlight, m.undialed, m.enqueued, m.evictedFull,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "queue_depth",
			Help: "Jobs accepted of which no port is dialed yet.",
		}, queueDepth),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "cached_entries",
			Help: "Results held, one per namespace/name at most.",
		}, cached),
	}
	return m
}

func (m *metrics) observeDial(s State, d time.Duration) {
	switch s {
	case Open:
		m.dialOpen.Inc()
	case Closed:
		m.dialClosed.Inc()
	default:
		m.dialInconclusive.Inc()
	}
	m.latency.Observe(d.Seconds())
}
