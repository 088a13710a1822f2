// Package portcheck verifies, off the request path, that the declared TCP
// ports of a pod IP accept connections, and keeps the latest verdict per
// resource. Its invariant: no caller ever waits for a dial — Enqueue, Get,
// Pending and Forget only touch memory and never block on I/O — while the
// dials themselves are bounded: at most Config.Workers jobs and at most
// Config.Workers dials (hence open sockets) at any moment, each dial limited
// by Config.DialTimeout and closed with SO_LINGER 0, and only to declared
// ports of an IP inside Config.Allow.
package portcheck

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Key names one revision of one resource. Results are stored per
// Namespace/Name; Revision says which revision a Result answers for.
type Key struct{ Namespace, Name, Revision string }

// Job asks for every Port of IP (a pod IP) to be dialed on behalf of Key.
type Job struct {
	Key   Key
	IP    string
	Ports []Port
}

// Config tunes a Verifier. A zero field takes its default; a negative one is
// a programmer error and makes New panic.
type Config struct {
	Workers     int                   // jobs and dials in progress at once; default 32
	QueueSize   int                   // accepted jobs waiting for a worker; default 1024
	DialTimeout time.Duration         // per dial; default 2s
	Recheck     time.Duration         // a Result this old is Stale; default 5m
	TTL         time.Duration         // a Result not read for this long is evicted; default 1h
	Allow       []netip.Prefix        // IPs that may be dialed; nil or empty allows all
	Registerer  prometheus.Registerer // where metrics go; nil leaves them unregistered
}

// Verifier dials pod ports in the background and caches one Result per
// resource. Its methods are safe for concurrent use. Create it with New.
type Verifier struct {
	// Dial opens one TCP connection; the context carries the per-dial
	// timeout. It defaults to (&net.Dialer{}).DialContext. A returned
	// connection that has SetLinger (as *net.TCPConn does) is closed with
	// SO_LINGER 0. Set it before Run, never after.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Now is the verifier's clock for CheckedAt, Stale, latency and TTL.
	// It defaults to time.Now. Set it before Run, never after.
	Now func() time.Time

	cfg   Config
	m     *metrics
	queue chan task
	slots chan struct{} // a dial holds one slot from before connect until after close

	mu      sync.RWMutex
	entries map[object]*entry // the latest Result per resource
	pending map[Key]struct{}  // queued or in flight: single flight per Key
	seq     uint64            // orders accepted jobs; a late answer never beats a newer one
	stopped bool
	started atomic.Bool

	landed func(Key) // test hook, called after a job finished (stored or not)
}

type object struct{ namespace, name string }

// task is an accepted Job and its acceptance order.
type task struct {
	job Job
	seq uint64
}

// entry is the stored Result of one resource. Only lastRead changes under a
// read lock, hence atomic.
type entry struct {
	rev      string
	res      Result
	seq      uint64
	lastRead atomic.Int64 // Now().UnixNano() of the last Get, or of the store
}

// New returns a Verifier configured by cfg and registers its metrics with
// cfg.Registerer, if set. It starts nothing: call Run. It panics on a
// negative Config field or if registration fails (a duplicate verifier).
func New(cfg Config) *Verifier {
	def := func(d *time.Duration, v time.Duration) {
		if *d < 0 {
			panic("portcheck: negative duration in Config")
		}
		if *d == 0 {
			*d = v
		}
	}
	if cfg.Workers < 0 || cfg.QueueSize < 0 {
		panic("portcheck: negative Workers or QueueSize in Config")
	}
	if cfg.Workers == 0 {
		cfg.Workers = 32
	}
	if cfg.QueueSize == 0 {
		cfg.QueueSize = 1024
	}
	def(&cfg.DialTimeout, 2*time.Second)
	def(&cfg.Recheck, 5*time.Minute)
	def(&cfg.TTL, time.Hour)
	cfg.Allow = slices.Clone(cfg.Allow)

	v := &Verifier{
		Dial:    defaultDial,
		Now:     time.Now,
		cfg:     cfg,
		queue:   make(chan task, cfg.QueueSize),
		slots:   make(chan struct{}, cfg.Workers),
		entries: make(map[object]*entry),
		pending: make(map[Key]struct{}),
	}
	v.m = newMetrics(
		func() float64 { return float64(len(v.queue)) },
		func() float64 { v.mu.RLock(); defer v.mu.RUnlock(); return float64(len(v.entries)) },
	)
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(v.m.collectors...)
	}
	return v
}

// Run starts Config.Workers workers over the queue, plus an evictor, and
// returns after ctx is done and all of them have exited, with every socket
// closed. Answers cut short by ctx are discarded, not stored. After Run
// returns, jobs still queued are dropped (their keys stop being Pending) and
// Enqueue refuses everything. Run may be called once.
func (v *Verifier) Run(ctx context.Context) {
	if !v.started.CompareAndSwap(false, true) {
		panic("portcheck: Run called twice")
	}
	var wg sync.WaitGroup
	for range v.cfg.Workers {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case t := <-v.queue:
					v.check(ctx, t)
				}
			}
		})
	}
	wg.Go(func() { v.evict(ctx) })
	wg.Wait()

	v.mu.Lock()
	defer v.mu.Unlock()
	v.stopped = true
	for {
		select {
		case t := <-v.queue:
			delete(v.pending, t.job.Key)
		default:
			return
		}
	}
}

// Enqueue asks for j to be dialed and reports whether it was accepted. It
// never blocks. It refuses (false) when a job for j.Key is already queued or
// in flight (single flight), when the queue is full, or after Run returned;
// each refusal is counted by reason. j.Ports is copied.
func (v *Verifier) Enqueue(j Job) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.stopped {
		v.m.refusedStop.Inc()
		return false
	}
	if _, dup := v.pending[j.Key]; dup {
		v.m.refusedPending.Inc()
		return false
	}
	j.Ports = slices.Clone(j.Ports)
	select {
	case v.queue <- task{job: j, seq: v.seq + 1}:
	default:
		v.m.refusedFull.Inc()
		return false
	}
	v.seq++
	v.pending[j.Key] = struct{}{}
	v.m.enqueued.Inc()
	return true
}

// Get returns the stored Result for k's resource if it answers for
// k.Revision, with Stale set when it is at least Config.Recheck old: the
// caller may use it and should redial. A Result not read for Config.TTL is
// gone. Get refreshes the entry's TTL, never blocks, and does not allocate;
// the Ports slice is shared and must not be modified.
func (v *Verifier) Get(k Key) (Result, bool) {
	now := v.Now()
	v.mu.RLock()
	e := v.entries[object{k.Namespace, k.Name}]
	if e == nil || e.rev != k.Revision || now.UnixNano()-e.lastRead.Load() >= int64(v.cfg.TTL) {
		v.mu.RUnlock()
		return Result{}, false
	}
	e.lastRead.Store(now.UnixNano())
	r := e.res
	v.mu.RUnlock()
	r.Stale = now.Sub(r.CheckedAt) >= v.cfg.Recheck
	return r, true
}

// Pending reports whether a job for k is queued or being dialed. It never
// blocks on I/O.
func (v *Verifier) Pending(k Key) bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	_, ok := v.pending[k]
	return ok
}

// Forget drops the stored Result of k's resource if it answers for
// k.Revision. It drops nothing else: a job for k already queued or in flight
// stays Pending and its answer still lands when it arrives; a caller that
// wants a fresh verdict calls Forget and Enqueue again once that answer is
// in. It never blocks on I/O.
func (v *Verifier) Forget(k Key) {
	v.mu.Lock()
	defer v.mu.Unlock()
	o := object{k.Namespace, k.Name}
	if e := v.entries[o]; e != nil && e.rev == k.Revision {
		delete(v.entries, o)
	}
}

// check dials one job and lands its answer.
func (v *Verifier) check(ctx context.Context, t task) {
	res := Result{IP: t.job.IP, CheckedAt: v.Now()}
	res.Ports = v.dialAll(ctx, t.job)
	v.land(t, res, ctx.Err() == nil)
	if v.landed != nil {
		v.landed(t.job.Key)
	}
}

// land clears t's pending mark and, if keep, stores res as its resource's
// Result — unless a job accepted after t has already answered.
func (v *Verifier) land(t task, res Result, keep bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.pending, t.job.Key)
	if !keep {
		return
	}
	o := object{t.job.Key.Namespace, t.job.Key.Name}
	e := v.entries[o]
	if e == nil {
		e = &entry{}
		v.entries[o] = e
	} else if e.seq > t.seq {
		return
	}
	e.rev, e.res, e.seq = t.job.Key.Revision, res, t.seq
	e.lastRead.Store(v.Now().UnixNano())
}

// evict drops, every TTL/4, the entries not read for TTL, so a deleted
// resource's Result is freed within 1.25×TTL (Get stops returning it at TTL).
func (v *Verifier) evict(ctx context.Context) {
	tick := time.NewTicker(max(v.cfg.TTL/4, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := v.Now().UnixNano()
		v.mu.Lock()
		for o, e := range v.entries {
			if now-e.lastRead.Load() >= int64(v.cfg.TTL) {
				delete(v.entries, o)
			}
		}
		v.mu.Unlock()
	}
}
