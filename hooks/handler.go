package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/portcheck"
)

// MaxBody is the default limit of a hook request body. A sync request
// carries every related Pod with its managedFields: hundreds of KiB to a few
// MiB for large apps.
const MaxBody = 32 << 20

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

	children childCache // built from Config, per parent name and spec
}

// ServeSync answers POST /sync: a size-limited read, the sync pipeline,
// the dials it asks for scheduled, the answer written.
// It never waits for a dial.
func (h *Handler) ServeSync(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	code := h.sync(w, r)
	h.observe("sync", code, start)
}

func (h *Handler) sync(w http.ResponseWriter, r *http.Request) int {
	body, code, err := h.read(w, r)
	if err != nil {
		return h.refuse(w, "sync", code, err)
	}
	defer release(body)
	var req observed.Request
	if err := observed.Decode(body.Bytes(), &req); err != nil {
		return h.refuse(w, "sync", http.StatusBadRequest, err)
	}
	a, err := h.Config.sync(&req, h.Verifier, h.now(), &h.children)
	if err != nil {
		return h.refuse(w, "sync", statusOf(err), err)
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

// ServeCustomize answers POST /customize.
func (h *Handler) ServeCustomize(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	code := h.customize(w, r)
	h.observe("customize", code, start)
}

func (h *Handler) customize(w http.ResponseWriter, r *http.Request) int {
	body, code, err := h.read(w, r)
	if err != nil {
		return h.refuse(w, "customize", code, err)
	}
	defer release(body)
	var req metacontroller.CustomizeRequest
	if err := json.Unmarshal(body.Bytes(), &req); err != nil {
		return h.refuse(w, "customize", http.StatusBadRequest, fmt.Errorf("decoding request: %s", observed.TypeError(err)))
	}
	resp, err := h.Config.Customize(&req)
	if err != nil {
		return h.refuse(w, "customize", statusOf(err), err)
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return h.refuse(w, "customize", http.StatusInternalServerError, fmt.Errorf("encoding response: %w", err))
	}
	return writeBody(w, b)
}

// refuse answers an error in one short line: Metacontroller copies the body
// into an event, so it stays short and free of request content beyond the
// reason.
func (h *Handler) refuse(w http.ResponseWriter, hook string, code int, err error) int {
	h.logger().Warn(hook+" refused", "code", code, "err", err)
	text(w, code, oneLine(err.Error()))
	return code
}

// statusOf is the HTTP status code of a pipeline error: 400 for a request
// it cannot read, 422 for one it cannot answer without deleting what runs,
// 500 for anything else (a bug of ours).
func statusOf(err error) int {
	var re *RequestError
	if errors.As(err, &re) {
		switch re.Kind {
		case Malformed:
			return http.StatusBadRequest
		case Unanswerable:
			return http.StatusUnprocessableEntity
		}
	}
	return http.StatusInternalServerError
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

// oneLine keeps a reason to one line of bounded length.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 512 {
		s = s[:509] + "..."
	}
	return s
}

// writeBody answers 200 with an encoded JSON body.
func writeBody(w http.ResponseWriter, b []byte) int {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
	return http.StatusOK
}
