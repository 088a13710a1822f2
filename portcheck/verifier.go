// Package portcheck verifies, off the request path, that the declared TCP
// ports of a pod IP accept connections, and keeps the latest verdict per
// resource. Its invariant: no caller ever waits for a dial — Enqueue, Get,
// Pending and Forget only touch memory and never block on I/O — while the
// dials themselves are bounded and fair: Config.Workers goroutines in all,
// hence at most Config.Workers dials (and open sockets) at any moment, at
// most Config.PerJob of them for one job, the next dial always taken from
// the next namespace in turn (so one tenant's hanging ports delay another's
// first dial by at most one dial timeout), each dial limited by
// Config.DialTimeout and closed with SO_LINGER 0, and only to declared ports
// of a pod IP inside Config.Allow that is none of the addresses target
// refuses whatever the allow list says (loopback, link-local, cloud
// metadata, unspecified).
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

// Verifier dials pod ports in the background and caches one Result per
// resource. Its methods are safe for concurrent use. Create it with New.
//
// Its memory is bounded: at most Config.QueueSize jobs accepted at once,
// and one entry (Result and backoff state) per namespace/name, evicted when
// not read for Config.TTL, and at most Config.MaxEntries of them.
type Verifier struct {
	// Dial opens one TCP connection; the context carries the per-dial
	// timeout. It defaults to (&net.Dialer{}).DialContext. A returned
	// connection that has SetLinger (as *net.TCPConn does) is closed with
	// SO_LINGER 0. Set it before Run, never after.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Now is the verifier's clock for CheckedAt, Stale, latency, backoff
	// and TTL. It defaults to time.Now. Set it before Run, never after.
	Now func() time.Time

	cfg  Config
	m    *metrics
	work *sync.Cond // on mu: signalled when a dial may be picked, broadcast on stop

	mu       sync.RWMutex
	entries  map[object]*entry  // the latest Result per resource
	pending  map[Key]struct{}   // accepted and not answered: single flight per Key
	tenants  []*tenant          // namespaces with accepted jobs, in turn order
	byNS     map[string]*tenant // the same, by namespace
	turn     int                // index in tenants of the next namespace to serve
	accepted int                // jobs accepted and not answered, ≤ QueueSize
	waiting  atomic.Int64       // of those, jobs no port of which is dialed yet
	seq      uint64             // orders accepted jobs; a late answer never beats a newer one
	stopping bool               // Run's context is done: workers pick nothing more
	stopped  bool               // Run returned: Enqueue refuses
	started  atomic.Bool

	landed func(Key) // test hook, called after a job finished (stored or not), without mu
}

type object struct{ namespace, name string }

// tenant is one namespace's accepted jobs, served in turn.
type tenant struct {
	namespace string
	runs      []*run
	turn      int // index in runs of the next job to serve
}

// run is one accepted job being answered: its ports are handed out one at a
// time (next), at most PerJob in flight, and it lands when none is left.
type run struct {
	job      Job
	seq      uint64
	addr     netip.Addr
	why      string // non-empty: no port is dialed, each is Inconclusive with this
	out      []PortResult
	checked  time.Time // when its first port was handed out
	next     int       // the next port to hand out
	inFlight int
	left     int // ports not yet answered
}

// entry is the stored Result of one resource, and its redial backoff. Only
// lastRead changes under a read lock, hence atomic.
type entry struct {
	rev       string
	res       Result
	seq       uint64
	lastRead  atomic.Int64  // Now().UnixNano() of the last Get, or of the store
	backoff   time.Duration // the current backoff; zero after a conclusive Result
	notBefore time.Time     // no redial of the same revision and IP before this
}

// New returns a Verifier configured by cfg and registers its metrics with
// cfg.Registerer, if set. It starts nothing: call Run. It panics on a
// negative Config field or if registration fails (a duplicate verifier).
func New(cfg Config) *Verifier {
	if cfg.Workers < 0 || cfg.QueueSize < 0 || cfg.PerJob < 0 || cfg.MaxEntries < 0 {
		panic("portcheck: negative Workers, PerJob, QueueSize or MaxEntries in Config")
	}
	if cfg.DialTimeout < 0 || cfg.Recheck < 0 || cfg.TTL < 0 || cfg.Backoff < 0 {
		panic("portcheck: negative duration in Config")
	}
	d := DefaultConfig()
	orDefault(&cfg.Workers, d.Workers)
	orDefault(&cfg.PerJob, d.PerJob)
	orDefault(&cfg.QueueSize, d.QueueSize)
	orDefault(&cfg.DialTimeout, d.DialTimeout)
	orDefault(&cfg.Recheck, d.Recheck)
	orDefault(&cfg.TTL, d.TTL)
	orDefault(&cfg.Backoff, d.Backoff)
	orDefault(&cfg.MaxEntries, d.MaxEntries)
	cfg.Allow = slices.Clone(cfg.Allow)

	v := &Verifier{
		Dial:    defaultDial,
		Now:     time.Now,
		cfg:     cfg,
		entries: make(map[object]*entry),
		pending: make(map[Key]struct{}),
		byNS:    make(map[string]*tenant),
	}
	v.work = sync.NewCond(&v.mu)
	v.m = newMetrics(
		func() float64 { return float64(v.waiting.Load()) },
		func() float64 { v.mu.RLock(); defer v.mu.RUnlock(); return float64(len(v.entries)) },
	)
	if cfg.Registerer != nil {
		cfg.Registerer.MustRegister(v.m.collectors...)
	}
	return v
}

// orDefault sets a zero *f to d.
func orDefault[T int | time.Duration](f *T, d T) {
	if *f == 0 {
		*f = d
	}
}

// Run starts Config.Workers workers, plus an evictor, and returns after ctx
// is done and all of them have exited, with every socket closed. Answers cut
// short by ctx are discarded, not stored. After Run returns, jobs not
// answered are dropped (their keys stop being Pending) and Enqueue refuses
// everything. Run may be called once.
func (v *Verifier) Run(ctx context.Context) {
	if !v.started.CompareAndSwap(false, true) {
		panic("portcheck: Run called twice")
	}
	var wg sync.WaitGroup
	for range v.cfg.Workers {
		wg.Go(func() { v.work1(ctx) })
	}
	wg.Go(func() { v.evict(ctx) })
	stop := context.AfterFunc(ctx, func() {
		v.mu.Lock()
		v.stopping = true
		v.mu.Unlock()
		v.work.Broadcast()
	})
	defer stop()
	wg.Wait()

	v.mu.Lock()
	defer v.mu.Unlock()
	v.stopped = true
	for _, tn := range v.tenants {
		for _, r := range tn.runs {
			delete(v.pending, r.job.Key)
		}
	}
	v.tenants, v.byNS, v.accepted = nil, nil, 0
	v.waiting.Store(0)
}

// Enqueue asks for j to be dialed and reports whether it was accepted. It
// never blocks. It refuses (false) when a job for j.Key is already accepted
// and not answered (single flight), when Config.QueueSize jobs are, when the
// resource's last Result for the same revision and IP was inconclusive and
// its backoff has not passed (the caller keeps using that Result), or after
// Run returned; each refusal is counted by reason. j.Ports is copied.
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
	if e := v.entries[object{j.Key.Namespace, j.Key.Name}]; e != nil && e.backoff > 0 &&
		e.rev == j.Key.Revision && e.res.IP == j.IP && v.Now().Before(e.notBefore) {
		v.m.refusedBackoff.Inc()
		return false
	}
	if v.accepted >= v.cfg.QueueSize {
		v.m.refusedFull.Inc()
		return false
	}
	v.seq++
	r := &run{job: j, seq: v.seq, out: make([]PortResult, len(j.Ports)), left: len(j.Ports)}
	r.job.Ports = slices.Clone(j.Ports)
	r.addr, r.why = v.target(j.IP)
	tn := v.byNS[j.Key.Namespace]
	if tn == nil {
		tn = &tenant{namespace: j.Key.Namespace}
		v.byNS[tn.namespace] = tn
		v.tenants = append(v.tenants, tn)
	}
	tn.runs = append(tn.runs, r)
	v.accepted++
	v.waiting.Add(1)
	v.pending[j.Key] = struct{}{}
	v.m.enqueued.Inc()
	if len(j.Ports) == 0 {
		v.finishLocked(tn, r, true)
		return true
	}
	for range min(len(j.Ports), v.cfg.PerJob) {
		v.work.Signal()
	}
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

// Pending reports whether a job for k is accepted and not answered. It
// never blocks on I/O.
func (v *Verifier) Pending(k Key) bool {
	v.mu.RLock()
	defer v.mu.RUnlock()
	_, ok := v.pending[k]
	return ok
}

// Forget drops the stored Result of k's resource if it answers for
// k.Revision, and with it the resource's backoff. It drops nothing else: a
// job for k already accepted stays Pending and its answer still lands when
// it arrives; a caller that wants a fresh verdict calls Forget and Enqueue
// again once that answer is in. It never blocks on I/O.
func (v *Verifier) Forget(k Key) {
	v.mu.Lock()
	defer v.mu.Unlock()
	o := object{k.Namespace, k.Name}
	if e := v.entries[o]; e != nil && e.rev == k.Revision {
		delete(v.entries, o)
	}
}

// work1 is one worker: it takes the next port to dial, dials it, records
// the answer, and lands the job when it was its last, until ctx is done.
func (v *Verifier) work1(ctx context.Context) {
	v.mu.Lock()
	for {
		tn, r, i, ok := v.pick()
		if !ok {
			if v.stopping {
				v.mu.Unlock()
				return
			}
			v.work.Wait()
			continue
		}
		v.mu.Unlock()
		res := v.answer(ctx, r, i)
		v.mu.Lock()
		r.out[i] = res
		r.inFlight--
		r.left--
		if r.left == 0 {
			v.finishLocked(tn, r, ctx.Err() == nil)
			if v.landed != nil {
				v.mu.Unlock()
				v.landed(r.job.Key)
				v.mu.Lock()
			}
		}
	}
}

// pick hands out the next port to dial, under mu: from the next namespace
// in turn that has a job with a port left and fewer than PerJob in flight,
// and within it from the next such job in turn. It reports false when no
// port can be handed out, or once Run's context is done.
func (v *Verifier) pick() (*tenant, *run, int, bool) {
	if v.stopping {
		return nil, nil, 0, false
	}
	for k := range len(v.tenants) {
		ti := (v.turn + k) % len(v.tenants)
		tn := v.tenants[ti]
		for m := range len(tn.runs) {
			ri := (tn.turn + m) % len(tn.runs)
			r := tn.runs[ri]
			if r.next >= len(r.job.Ports) || r.inFlight >= v.cfg.PerJob {
				continue
			}
			if r.next == 0 {
				r.checked = v.Now()
				v.waiting.Add(-1)
			}
			i := r.next
			r.next++
			r.inFlight++
			tn.turn, v.turn = ri+1, ti+1
			return tn, r, i, true
		}
	}
	return nil, nil, 0, false
}

// finishLocked takes the answered run r off its namespace's turn and lands
// it: it clears r's pending mark and, if keep, stores its Result. Under mu.
func (v *Verifier) finishLocked(tn *tenant, r *run, keep bool) {
	if r.next == 0 { // answered without a port handed out: no ports
		r.checked = v.Now()
		v.waiting.Add(-1)
	}
	if i := slices.Index(tn.runs, r); i >= 0 {
		tn.runs = slices.Delete(tn.runs, i, i+1)
		if tn.turn > i {
			tn.turn--
		}
	}
	if len(tn.runs) == 0 {
		delete(v.byNS, tn.namespace)
		if i := slices.Index(v.tenants, tn); i >= 0 {
			v.tenants = slices.Delete(v.tenants, i, i+1)
			if v.turn > i {
				v.turn--
			}
		}
	}
	v.accepted--
	v.landLocked(task{job: r.job, seq: r.seq}, Result{IP: r.job.IP, Ports: r.out, CheckedAt: r.checked}, keep)
}

// task is an accepted Job and its acceptance order.
type task struct {
	job Job
	seq uint64
}

// landLocked clears t's pending mark and, if keep, stores res as its
// resource's Result — unless a job accepted after t has already answered —
// with the resource's backoff: doubled (from Config.Backoff, up to Recheck)
// when res has an Inconclusive port, reset otherwise.
func (v *Verifier) landLocked(t task, res Result, keep bool) {
	delete(v.pending, t.job.Key)
	if !keep {
		return
	}
	o := object{t.job.Key.Namespace, t.job.Key.Name}
	e := v.entries[o]
	if e == nil {
		if len(v.entries) >= v.cfg.MaxEntries {
			v.shedLocked()
		}
		e = &entry{}
		v.entries[o] = e
	} else if e.seq > t.seq {
		return
	}
	if inconclusive(res) {
		e.backoff = min(max(2*e.backoff, v.cfg.Backoff), max(v.cfg.Recheck, v.cfg.Backoff))
		e.notBefore = v.Now().Add(e.backoff)
	} else {
		e.backoff, e.notBefore = 0, time.Time{}
	}
	e.rev, e.res, e.seq = t.job.Key.Revision, res, t.seq
	e.lastRead.Store(v.Now().UnixNano())
}

// shedLocked evicts the eighth of Config.MaxEntries (at least one) least
// recently read entries, so that a full cache sorts its entries once per
// eighth of them stored, not once per store. Under mu.
func (v *Verifier) shedLocked() {
	n := max(1, v.cfg.MaxEntries/8)
	reads := make([]int64, 0, len(v.entries))
	for _, e := range v.entries {
		reads = append(reads, e.lastRead.Load())
	}
	slices.Sort(reads)
	cut := reads[min(n, len(reads))-1]
	for o, e := range v.entries {
		if n == 0 {
			break
		}
		if e.lastRead.Load() <= cut {
			delete(v.entries, o)
			v.m.evictedFull.Inc()
			n--
		}
	}
}

// inconclusive reports whether any port of res is Inconclusive.
func inconclusive(res Result) bool {
	for _, p := range res.Ports {
		if p.State == Inconclusive {
			return true
		}
	}
	return false
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
