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

// ServeSync answers POST /sync: decode, Sync, schedule the dials, encode.
// It never waits for a dial.
func (h *Handler) ServeSync(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	code := h.sync(w, r)
	h.observe("sync", code, start)
}

func (h *Handler) sync(w http.ResponseWriter, r *http.Request) int {
	body, code, err := h.read(w, r)
	if err != nil {
		return h.fail(w, "sync", code, err)
	}
	defer release(body)
	a, err := h.answer(body.Bytes())
	if err != nil {
		return h.fail(w, "sync", statusOf(err), err)
	}
	for _, j := range a.jobs {
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
	if log := h.logger(); log.Enabled(r.Context(), slog.LevelDebug) {
		log.Debug("sync", "parent", a.parent, "jobs", len(a.jobs), "resync", a.resync)
	}
	return writeBody(w, a.body)
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
		return h.fail(w, "customize", code, err)
	}
	defer release(body)
	var req metacontroller.CustomizeRequest
	if err := json.Unmarshal(body.Bytes(), &req); err != nil {
		return h.fail(w, "customize", http.StatusBadRequest, fmt.Errorf("decoding request: %s", oneLine(typeError(err))))
	}
	resp, err := h.Config.Customize(&req)
	if err != nil {
		return h.fail(w, "customize", statusOf(err), err)
	}
	return writeJSON(w, resp)
}

// fail answers an error in one short line: Metacontroller copies the body
// into an event, so it stays short and free of request content beyond the
// reason.
func (h *Handler) fail(w http.ResponseWriter, hook string, code int, err error) int {
	h.logger().Warn(hook+" refused", "code", code, "err", err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	fmt.Fprintln(w, oneLine(err.Error()))
	return code
}

func statusOf(err error) int {
	var re *RequestError
	if errors.As(err, &re) {
		return re.Status
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

// parentName is namespace/name of a raw parent, for logs.
func parentName(raw json.RawMessage) string {
	var p struct {
		Metadata struct{ Namespace, Name string } `json:"metadata"`
	}
	_ = json.Unmarshal(raw, &p)
	return p.Metadata.Namespace + "/" + p.Metadata.Name
}

func writeJSON(w http.ResponseWriter, v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encoding response: "+err.Error(), http.StatusInternalServerError)
		return http.StatusInternalServerError
	}
	return writeBody(w, b)
}

// writeBody answers 200 with an encoded JSON body.
func writeBody(w http.ResponseWriter, b []byte) int {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
	return http.StatusOK
}
