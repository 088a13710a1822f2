package hooks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Admission bounds the memory the hook requests of one replica hold, by the
// bytes they hold rather than by their number, and shares it fairly between
// the namespaces of their parents.
//
// A request reserves from the budget as its body arrives (bodyCost: 3.6
// bytes a body byte, the body and what decoding makes of it), then, before
// decoding, PerObject bytes for each object the body holds; it gives all of
// it back when it ends, whatever way. A request never holds budget for
// bytes that have not arrived; the first IdentifyWindow bytes of a body,
// read before its parent's namespace is known, are the connection's cost,
// as its header bytes are, and are charged once the namespace is known.
//
// Fairness: a namespace may hold at most its share, the budget divided by
// the namespaces active now (holding bytes, or admitted or refused in the
// last FairWindow), but for its one request in flight, which may hold up
// to the budget. A reservation past the share is refused at once; one
// within the share that finds the budget full waits, at most AdmitWait,
// for the namespaces past their share to give bytes back; otherwise it is
// refused. A refusal is a 429 with Retry-After, which Metacontroller
// honours by syncing the parent again after it.
type admission struct {
	budget int64
	now    func() time.Time

	mu      sync.Mutex
	used    int64
	held    map[string]int64     // bytes held per namespace
	seen    map[string]time.Time // last reservation asked per namespace
	pruned  time.Time
	release chan struct{} // closed and replaced whenever bytes are given back
	// onChange, when set, is told the bytes held after each change, under mu.
	onChange func(used int64)
}

// The estimate of what a sync request holds: 3.6 bytes a body byte (the
// read buffer and what decoding makes of the bytes) and 3 KiB an object
// (what decoding costs an object whatever its size). On pods as the
// kubelet reports them, with and without managedFields, and on minimal
// pods with and without a 1.5 KB annotation, a sync allocates 3.97-5.03
// bytes a body byte in all (2.4-21.8 KiB a pod), and the estimate is
// 1.05-1.36 times that (hooks TestEstimateCoversDecoding,
// BenchmarkAdmissionEstimate; docs/performance.md, "Admission by bytes").
const (
	// reserveFactorNum/reserveDenominator bytes are reserved for each body
	// byte as it arrives (bodyCost).
	reserveFactorNum   = 36
	reserveDenominator = 10
	// PerObject is reserved for each object a body holds, before decoding.
	PerObject = 3 << 10
	// IdentifyWindow is how much of a body is read before its parent's
	// namespace must be known; a body that does not say it by then is
	// charged to the namespace "".
	IdentifyWindow = 64 << 10
	// FairWindow is how long a namespace counts as active after it last
	// asked for bytes.
	FairWindow = 10 * time.Second
	// AdmitWait is the longest a reservation within its namespace's share
	// waits for bytes held past other namespaces' shares: less than
	// RetryAfter, so a waiting request is answered no later than a
	// refused one would be retried.
	AdmitWait = 500 * time.Millisecond
)

// bodyCost is what n body bytes reserve.
func bodyCost(n int64) int64 {
	return (n*reserveFactorNum + reserveDenominator - 1) / reserveDenominator
}

// DefaultMemory is the hook budget of a replica whose Go memory limit is
// limit (GOMEMLIMIT; math.MaxInt64 when unset): half of it, the other half
// being the process at rest with its caches full (91 MiB RSS after 10,000
// resources) and the collector's headroom; 128 MiB when no limit is set
// (half the chart's default).
func DefaultMemory(limit int64) int64 {
	if limit <= 0 || limit >= 1<<50 {
		return 128 << 20
	}
	return limit / 2
}

func newAdmission(budget int64, now func() time.Time) *admission {
	return &admission{budget: budget, now: now, held: map[string]int64{}, seen: map[string]time.Time{}, release: make(chan struct{})}
}

// errOverShare is a reservation refused: the namespace is past its share,
// or the budget stayed full for AdmitWait.
var errOverShare = errors.New("over the admission budget")

// tooLargeError is a request whose reservation alone exceeds the budget: it
// can never be admitted, so it is answered 413, not 429.
type tooLargeError struct{ want, budget int64 }

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("request would hold %d bytes decoded, over the hook memory budget of %d (--hook-memory)", e.want, e.budget)
}

// ticket is one request's reservation. Its zero value holds nothing; it is
// used by one goroutine.
type ticket struct {
	a     *admission
	ns    string
	known bool  // ns is known: reservations are charged
	owed  int64 // cost of what arrived before ns was known
	held  int64
}

// identify names the ticket's namespace and charges what it owes.
func (t *ticket) identify(ctx context.Context, ns string) error {
	t.ns, t.known = ns, true
	owed := t.owed
	t.owed = 0
	return t.reserve(ctx, owed)
}

// arrived accounts for n body bytes that arrived.
func (t *ticket) arrived(ctx context.Context, n int) error {
	if !t.known {
		t.owed += bodyCost(int64(n))
		return nil
	}
	return t.reserve(ctx, bodyCost(int64(n)))
}

// reserve takes n more bytes for the ticket's namespace (see admission).
func (t *ticket) reserve(ctx context.Context, n int64) error {
	if n <= 0 {
		return nil
	}
	a := t.a
	if t.held+n > a.budget {
		return &tooLargeError{want: t.held + n, budget: a.budget}
	}
	var deadline <-chan time.Time
	for {
		a.mu.Lock()
		now := a.now()
		a.seen[t.ns] = now
		a.prune(now)
		share := a.budget / int64(len(a.seen))
		switch {
		case a.held[t.ns]+n > share && a.held[t.ns] > t.held && len(a.seen) > 1:
			// Past the share with other requests of its namespace in
			// flight. A namespace's one request may pass its share (up
			// to the budget): an app larger than a share is still synced.
			a.mu.Unlock()
			return fmt.Errorf("%w: namespace %q holds %d of its share of %d bytes among %d namespaces", errOverShare, clip(t.ns), a.held[t.ns], share, len(a.seen))
		case a.used+n <= a.budget:
			a.used += n
			a.held[t.ns] += n
			t.held += n
			a.changed()
			a.mu.Unlock()
			return nil
		case !a.othersOverShare(t.ns, share):
			a.mu.Unlock()
			return fmt.Errorf("%w: %d of %d bytes held", errOverShare, a.used, a.budget)
		}
		wake := a.release
		a.mu.Unlock()
		if deadline == nil {
			timer := time.NewTimer(AdmitWait)
			defer timer.Stop()
			deadline = timer.C
		}
		select {
		case <-wake:
		case <-deadline:
			return fmt.Errorf("%w: waited %s for %d bytes", errOverShare, AdmitWait, n)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// declared checks, once the namespace is known, the cost of the length the
// request declares (Content-Length) without reserving it: a request that
// says it will pass its namespace's share while others of the namespace are
// in flight is refused before its body is read, rather than when it gets
// there. A body that declares less is held to what arrives.
func (t *ticket) declared(length int64) error {
	if length <= 0 {
		return nil
	}
	a, n := t.a, bodyCost(length)
	if n > a.budget {
		return &tooLargeError{want: n, budget: a.budget}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	share := a.budget / int64(max(1, len(a.seen)))
	if others := a.held[t.ns] - t.held; others > 0 && others+n > share && len(a.seen) > 1 {
		return fmt.Errorf("%w: namespace %q holds %d of its share of %d bytes among %d namespaces, and this request declares %d body bytes", errOverShare, clip(t.ns), others, share, len(a.seen), length)
	}
	return nil
}

// done gives back everything the ticket holds. It may be called again.
func (t *ticket) done() {
	t.owed = 0
	if t.held == 0 {
		return
	}
	a := t.a
	a.mu.Lock()
	a.used -= t.held
	if a.held[t.ns] -= t.held; a.held[t.ns] == 0 {
		delete(a.held, t.ns)
	}
	a.seen[t.ns] = a.now()
	t.held = 0
	a.changed()
	close(a.release)
	a.release = make(chan struct{})
	a.mu.Unlock()
}

func (a *admission) changed() {
	if a.onChange != nil {
		a.onChange(a.used)
	}
}

// othersOverShare reports whether a namespace other than ns holds more than
// share: bytes that will come back without waiting for ns.
func (a *admission) othersOverShare(ns string, share int64) bool {
	for other, h := range a.held {
		if other != ns && h > share {
			return true
		}
	}
	return false
}

// prune forgets the namespaces that hold nothing and asked for nothing in
// the last FairWindow, at most once a second.
func (a *admission) prune(now time.Time) {
	if now.Sub(a.pruned) < time.Second {
		return
	}
	a.pruned = now
	for ns, at := range a.seen {
		if a.held[ns] == 0 && now.Sub(at) > FairWindow {
			delete(a.seen, ns)
		}
	}
}

// inUse is the bytes held and the namespaces holding them (tests, metrics).
func (a *admission) inUse() (int64, int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.used, len(a.held)
}

// clip keeps a name from the request short enough for a one-line refusal.
func clip(s string) string {
	if len(s) > 64 {
		return s[:61] + "..."
	}
	return s
}
