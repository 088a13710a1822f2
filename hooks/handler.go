package hooks

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/portcheck"
)

// MaxBody is the default limit of a hook request body. A sync request
// carries every related Pod with its managedFields: 5.3 KB a pod, so 16 MiB
// holds an app of about 3,000 pods (docs/performance.md sizes it against the
// chart's memory limit).
const MaxBody = 16 << 20

// RetryAfter is the Retry-After of a request refused for want of hook
// memory (Admission: a namespace past its share, or the budget full), and
// of a sync held for a dial (HeldError: a refused port answers in
// milliseconds, the queue permitting).
const RetryAfter = time.Second

// Budget bounds what one sync request may make the hook decode: objects per
// group, bytes per object, pods per sync (see observed.Budget).
type Budget = observed.Budget

// DefaultBudget is the budget of a Handler whose Budget is zero.
var DefaultBudget = observed.DefaultBudget

// BudgetError is a request over its Budget, answered 413 naming the budget.
type BudgetError = observed.BudgetError

// Scheduler is the verifier as the handler uses it: Sync reads it as
// Verdicts; the handler schedules the dials Sync asks for. Enqueue and
// Forget never block.
type Scheduler interface {
	Verdicts
	Enqueue(portcheck.Job) bool
	Forget(portcheck.Key)
}

// Handler serves the hooks. Its zero value is not usable; set Verifier. Set
// every field before it serves and never after, and do not copy a Handler
// that has served: it caches what it built from Config.
type Handler struct {
	Config   Config
	Verifier Scheduler
	// Now is the clock of syncs; default time.Now.
	Now     func() time.Time
	Log     *slog.Logger
	Metrics *Metrics
	// MaxBody limits request bodies; default MaxBody.
	MaxBody int64
	// Budget bounds what a sync request may make the hook decode; zero
	// fields take DefaultBudget's.
	Budget Budget
	// Memory is the hook memory budget in bytes: what the requests being
	// served may hold at once, by the estimate of admission (bytes, not
	// requests), shared fairly between their parents' namespaces; past it,
	// 429 with Retry-After. Default: DefaultMemory(GOMEMLIMIT).
	Memory int64

	children childCache      // built from Config, per parent name and spec
	decoded  *observed.Cache // what each object's bytes decoded into
	admit    *admission
	initOnce sync.Once
}

// maxDecodedBytes bounds the handler's observed.Cache by what its values
// hold: a few hundred apps at rest (the serving fixture's, a public app of
// three pods, take 37 KB); past that, the share of a fleet that fits.
// BenchmarkRSS10k, 10,000 distinct resources: 91 MiB of RSS with it full,
// 69 without it.
const maxDecodedBytes = 8 << 20

// ticket starts a request's reservation of hook memory; give it back with
// ticket.done on every path.
func (h *Handler) ticket() *ticket {
	h.initOnce.Do(func() {
		m := h.Memory
		if m <= 0 {
			m = DefaultMemory(debug.SetMemoryLimit(-1))
		}
		h.admit = newAdmission(m, time.Now)
		if h.Metrics != nil {
			h.Metrics.admissionBudget.Set(float64(m))
			h.admit.onChange = func(used int64) { h.Metrics.admissionHeld.Set(float64(used)) }
		}
		h.decoded = observed.NewCache(maxDecodedBytes)
	})
	return &ticket{a: h.admit}
}

// refuseAdmission answers a request whose reservation was refused: 429 with
// Retry-After, which Metacontroller reads as "requeue after this long" (no
// event, no failed-sync backoff); 413 for one no budget holds; 503 for one
// whose client went away while it waited.
func (h *Handler) refuseAdmission(w http.ResponseWriter, hook string, code int, err error) int {
	if code == http.StatusTooManyRequests {
		retryAfter(w)
		if h.Metrics != nil {
			h.Metrics.admissionRefused.Inc()
		}
		return h.refuse(w, hook, code, fmt.Errorf("%w; retry after %s", err, RetryAfter))
	}
	if code == http.StatusServiceUnavailable {
		return h.abandoned(w, err)
	}
	return h.refuse(w, hook, code, err)
}

// ServeSync answers POST /sync: a size-limited read, the sync pipeline,
// the dials it asks for scheduled, the answer written.
// It never waits for a dial.
func (h *Handler) ServeSync(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	code := h.handleSync(w, r)
	h.observe("sync", code, start)
}

func (h *Handler) handleSync(w http.ResponseWriter, r *http.Request) int {
	t := h.ticket()
	defer t.done()
	body, code, err := h.read(w, r, t)
	if err != nil {
		return h.refuseAdmission(w, "sync", code, err)
	}
	defer release(body)
	alive := r.Context().Err
	var req observed.Request
	admitted := func(objects int) error { return t.reserve(r.Context(), int64(objects)*PerObject) }
	if err := observed.DecodeAdmitted(body.Bytes(), &req, h.decoded, h.Budget, admitted); err != nil {
		var over *BudgetError
		if errors.As(err, &over) {
			return h.refuse(w, "sync", http.StatusRequestEntityTooLarge, err)
		}
		if code := admitStatus(err); code != http.StatusInternalServerError {
			return h.refuseAdmission(w, "sync", code, err)
		}
		return h.refuse(w, "sync", http.StatusBadRequest, err)
	}
	if err := alive(); err != nil {
		return h.abandoned(w, err)
	}
	a, err := h.Config.pipeline(&req, h.Verifier, h.now(), &h.children, alive)
	if err != nil {
		if cerr := alive(); cerr != nil && errors.Is(err, cerr) {
			return h.abandoned(w, err)
		}
		return h.refuse(w, "sync", statusOf(err), err)
	}
	if a.held != "" {
		return h.hold(w, a)
	}
	b, err := a.encode()
	if err != nil {
		return h.refuse(w, "sync", http.StatusInternalServerError, err)
	}
	h.schedule(a.jobs)
	if log := h.logger(); log.Enabled(r.Context(), slog.LevelDebug) {
		log.Debug("sync", "parent", a.parent, "jobs", len(a.jobs), "resync", a.resync)
	}
	return writeBody(w, b)
}

// schedule hands the dials a sync asked for to the verifier; it never
// blocks (a refused dial is asked for again by a later sync).
func (h *Handler) schedule(jobs []DialJob) {
	for _, j := range jobs {
		if j.Forget {
			h.Verifier.Forget(j.Key)
		}
		result := "scheduled"
		if !h.Verifier.Enqueue(j.Job) {
			result = "refused"
		}
		if h.Metrics != nil {
			h.Metrics.dials.WithLabelValues(result).Inc()
		}
	}
}

// hold answers a held sync (HeldError): its dials scheduled, 429 with
// Retry-After, after which Metacontroller syncs again and finds the verdict
// of the dial.
func (h *Handler) hold(w http.ResponseWriter, a answer) int {
	h.schedule(a.jobs)
	if h.Metrics != nil {
		h.Metrics.held.Inc()
	}
	h.logger().Debug("sync held", "parent", a.parent, "jobs", len(a.jobs), "reason", a.held)
	retryAfter(w)
	text(w, http.StatusTooManyRequests, oneLine((&HeldError{Reason: a.held}).Error()))
	return http.StatusTooManyRequests
}

// retryAfter sets the Retry-After of a 429: RetryAfter, in the whole
// seconds Metacontroller reads it in.
func retryAfter(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(int(RetryAfter/time.Second)))
}

func (h *Handler) observe(hook string, code int, start time.Time) {
	if h.Metrics == nil {
		return
	}
	h.Metrics.requests.WithLabelValues(hook, strconv.Itoa(code)).Inc()
	h.Metrics.duration.WithLabelValues(hook).Observe(time.Since(start).Seconds())
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Handler) logger() *slog.Logger {
	if h.Log != nil {
		return h.Log
	}
	return slog.New(slog.DiscardHandler)
}
