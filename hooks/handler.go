package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/portcheck"
	"github.com/stackdome/stackdome/schema"
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

// syncAnswer is an encoded sync answer, the dials it asks for, and for the
// log the parent's namespace/name and resyncAfterSeconds.
type syncAnswer struct {
	body   []byte
	jobs   []DialJob
	parent string
	resync float64
}

// answer computes the answer to a sync request body. The common case — a
// well-formed request whose spec is valid — is decoded in one pass
// (wireRequest), reuses the children built for the same name and spec
// (childCache) and is encoded by parts; it gives Sync's answer byte for byte
// (TestFastPathIsSync, FuzzSync). Anything else — a body that is not a
// well-formed sync request, an invalid spec — is answered by Sync itself, so
// every refusal and every invalid-spec answer is exactly Sync's.
func (h *Handler) answer(body []byte) (syncAnswer, error) {
	cfg := h.Config.withDefaults()
	now := h.now()
	var wire wireRequest
	if json.Unmarshal(body, &wire) == nil {
		p, err := decodeParent(wire.Parent)
		if err != nil {
			return syncAnswer{}, err // Sync's first step on the same raw parent
		}
		if spec, err := validSpec(p); err == nil {
			built, err := h.children.get(cfg, p.Metadata.Name, p.RawSpec, spec)
			if err != nil {
				return syncAnswer{}, fmt.Errorf("building children: %w", err)
			}
			out := decide(cfg, p, spec, built.revision, observeWire(&wire, p), h.Verifier, stampOf(now))
			b, err := encodeSync(out.status, built.json, out.resync.Seconds())
			if err != nil {
				return syncAnswer{}, err
			}
			return syncAnswer{body: b, jobs: out.jobs, parent: p.Metadata.Namespace + "/" + p.Metadata.Name, resync: out.resync.Seconds()}, nil
		}
	}
	var req metacontroller.SyncRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return syncAnswer{}, &RequestError{Status: http.StatusBadRequest, Err: fmt.Errorf("decoding request: %s", oneLine(typeError(err)))}
	}
	resp, jobs, err := cfg.Sync(&req, h.Verifier, now)
	if err != nil {
		return syncAnswer{}, err
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return syncAnswer{}, fmt.Errorf("encoding response: %w", err)
	}
	return syncAnswer{body: b, jobs: jobs, parent: parentName(req.Parent), resync: resp.ResyncAfterSeconds}, nil
}

// encodeSync writes what json.Marshal writes for a
// metacontroller.SyncResponse of status, the already encoded children array
// and resync, without encoding the children again.
func encodeSync(status schema.Status, children []byte, resync float64) ([]byte, error) {
	st, err := json.Marshal(status)
	if err != nil {
		return nil, fmt.Errorf("encoding response: %w", err)
	}
	b := make([]byte, 0, len(st)+len(children)+64)
	b = append(b, `{"status":`...)
	b = append(b, st...)
	b = append(b, `,"children":`...)
	b = append(b, children...)
	if resync != 0 {
		r, err := json.Marshal(resync)
		if err != nil {
			return nil, fmt.Errorf("encoding response: %w", err)
		}
		b = append(b, `,"resyncAfterSeconds":`...)
		b = append(b, r...)
	}
	return append(b, '}'), nil
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
	resp, err := Customize(&req)
	if err != nil {
		return h.fail(w, "customize", statusOf(err), err)
	}
	return writeJSON(w, resp)
}

// read reads a size-limited body into a pooled buffer; give it back with
// release once nothing refers to its bytes (encoding/json copies what it
// decodes, json.RawMessage included).
func (h *Handler) read(w http.ResponseWriter, r *http.Request) (*bytes.Buffer, int, error) {
	limit := h.MaxBody
	if limit <= 0 {
		limit = MaxBody
	}
	if r.ContentLength > limit {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("request body exceeds %d bytes", limit)
	}
	buf := buffers.Get().(*bytes.Buffer)
	buf.Reset()
	if r.ContentLength > 0 {
		// One allocation of the right size instead of doubling from 512
		// bytes; the spare MinRead lets ReadFrom see EOF without growing.
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit)); err != nil {
		release(buf)
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("request body exceeds %d bytes", limit)
		}
		return nil, http.StatusBadRequest, fmt.Errorf("reading request body: %w", err)
	}
	return buf, http.StatusOK, nil
}

// buffers hold request bodies between requests. A buffer that grew past
// maxPooled (a huge request) is left to the garbage collector rather than
// kept for ever.
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooled = 1 << 20

func release(b *bytes.Buffer) {
	if b.Cap() <= maxPooled {
		buffers.Put(b)
	}
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
