package portcheck

// land is landLocked under mu: a Result stored as a worker stores one,
// without dialing, for the tests and benchmarks that fill the cache
// (workers land through finishLocked, under the lock they hold).
func (v *Verifier) land(t task, res Result, keep bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.landLocked(t, res, keep)
}
