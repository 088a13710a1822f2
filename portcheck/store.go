package portcheck

import (
	"context"
	"slices"
	"time"
)

// The verdict store: a landed job's Result with its backoff, and the
// bounds of the store (MaxEntries, TTL).

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
