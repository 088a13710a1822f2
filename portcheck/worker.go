package portcheck

import (
	"context"
	"slices"
)

// The workers: each takes the next port to dial in the fair order, dials it
// and records the answer; the last answer of a job lands it.

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
