package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/stackdome/stackdome/hooks/internal/observed"
)

// Request bodies are read into pooled buffers: a sync request is tens of
// KiB to MiB, and Metacontroller sends one per parent per resync.

// read reads a size-limited body into a pooled buffer; give it back with
// release once nothing refers to its bytes (encoding/json copies what it
// decodes, json.RawMessage included). The buffer grows with the bytes that
// arrive, never with what Content-Length declares: a client declaring 32 MiB
// and sending nothing costs nothing but its connection. A declared length past
// the limit is refused before a byte is read.
//
// Each read's bytes are reserved on t once they have arrived (ticket.arrived),
// charged to the parent's namespace as soon as the body's start names it
// (observed.ParentNamespace, within IdentifyWindow bytes): a body that
// trickles or lies about its length holds only what it sent. A reservation
// refused ends the read: 429 (errOverShare) or 413 (tooLargeError).
func (h *Handler) read(w http.ResponseWriter, r *http.Request, t *ticket) (*bytes.Buffer, int, error) {
	limit := h.maxBody()
	if r.ContentLength > limit {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("request body exceeds %d bytes (--max-body)", limit)
	}
	ctx := r.Context()
	body := http.MaxBytesReader(w, r.Body, limit)
	buf := buffers.Get().(*bytes.Buffer)
	buf.Reset()
	for {
		if buf.Available() < bytes.MinRead {
			// Doubling: the buffer is at most twice what arrived, which
			// the reservation of each byte covers (bodyCost).
			buf.Grow(bytes.MinRead)
		}
		n, err := body.Read(buf.AvailableBuffer()[:buf.Available()])
		if n > 0 {
			buf.Write(buf.AvailableBuffer()[:n])
			var rerr error
			if t.known {
				rerr = t.arrived(ctx, n)
			} else if rerr = t.arrived(ctx, n); rerr == nil {
				if ns, ok := observed.ParentNamespace(buf.Bytes()); ok {
					rerr = t.identify(ctx, ns)
				} else if buf.Len() >= IdentifyWindow {
					rerr = t.identify(ctx, "")
				}
				if rerr == nil && t.known {
					rerr = t.declared(r.ContentLength)
				}
			}
			if rerr != nil {
				release(buf)
				return nil, admitStatus(rerr), rerr
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			release(buf)
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("request body exceeds %d bytes (--max-body)", limit)
			}
			return nil, http.StatusBadRequest, fmt.Errorf("reading request body: %w", err)
		}
	}
	if !t.known {
		// A short body that never said its namespace: what it is decides
		// the answer; its bytes are charged to "".
		ns, _ := observed.ParentNamespace(buf.Bytes())
		if err := t.identify(ctx, ns); err != nil {
			release(buf)
			return nil, admitStatus(err), err
		}
	}
	return buf, http.StatusOK, nil
}

// admitStatus is the answer to a refused reservation: 413 for a request the
// budget can never hold, 429 for one refused for now, 503 for one whose
// client went away while it waited.
func admitStatus(err error) int {
	var tooLarge *tooLargeError
	switch {
	case errors.As(err, &tooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, errOverShare):
		return http.StatusTooManyRequests
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func (h *Handler) maxBody() int64 {
	if h.MaxBody > 0 {
		return h.MaxBody
	}
	return MaxBody
}

// buffers hold request bodies between requests. A buffer that grew past
// maxPooled is left to the garbage collector rather than kept for ever:
// a pooled buffer is read into before any of it is reserved, so it is no
// larger than what a body may hold unreserved (IdentifyWindow).
var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooled = IdentifyWindow

func release(b *bytes.Buffer) {
	if b.Cap() <= maxPooled {
		buffers.Put(b)
	}
}
