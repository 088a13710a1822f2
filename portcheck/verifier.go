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
