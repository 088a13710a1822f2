package portcheck

import (
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Config tunes a Verifier. A zero field takes its default, the field of
// DefaultConfig; a negative one is a programmer error and makes New panic.
type Config struct {
	Workers     int           // dials in flight at once, all jobs together
	PerJob      int           // dials in flight at once for one job
	QueueSize   int           // jobs accepted and not yet answered
	DialTimeout time.Duration // per dial
	Recheck     time.Duration // a Result this old is Stale
	TTL         time.Duration // a Result not read for this long is evicted
	// MaxEntries is how many resources' Results are held at most. Storing
	// a new resource's Result when MaxEntries are held first evicts the
	// eighth least recently read (by Get, or stored): those resources then
	// read as never verified, as on a fresh Verifier, never as verified.
	MaxEntries int
	// Backoff is how long a resource whose last Result has an Inconclusive
	// port is not redialed for the same revision and IP (Enqueue refuses,
	// reason backoff); it doubles with each further inconclusive Result, up
	// to Recheck, and is reset by a conclusive one.
	Backoff time.Duration
	// Allow are the prefixes pod IPs may be dialed in. Empty dials nothing:
	// every port is Inconclusive, "not dialed". An address target refuses
	// (loopback, link-local, metadata, unspecified …) is refused inside
	// Allow too.
	Allow []netip.Prefix
	// AllowLoopback lets loopback addresses inside Allow be dialed. For
	// tests only, whose listeners are on 127.0.0.1: a pod IP is never
	// loopback, and a loopback dial reaches the node's own services.
	AllowLoopback bool
	Registerer    prometheus.Registerer // where metrics go; nil leaves them unregistered
}

// DefaultConfig is the one statement of the Verifier's defaults: New fills
// each zero field of its Config from it, and stackdome's flags (and through
// them the chart's values) start from it. It allows no address: Allow is
// empty, so nothing is dialed until the caller names the pod CIDRs.
func DefaultConfig() Config {
	return Config{
		Workers:     32,
		PerJob:      4,
		QueueSize:   1024,
		DialTimeout: 2 * time.Second,
		Recheck:     5 * time.Minute,
		TTL:         time.Hour,
		Backoff:     30 * time.Second,
		// ~410 B each for a resource of two ports (BenchmarkEntryBytes):
		// 50,000 hold ~20 MiB, under a tenth of the chart's 256Mi.
		MaxEntries: 50_000,
	}
}
