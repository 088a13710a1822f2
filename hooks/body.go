package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"sync"
)

// Request bodies are read into pooled buffers: a sync request is tens of
// KiB to MiB, and Metacontroller sends one per parent per resync.

// read reads a size-limited body into a pooled buffer; give it back with
// release once nothing refers to its bytes (encoding/json copies what it
// decodes, json.RawMessage included). The buffer grows with the bytes that
// arrive, never with what Content-Length declares: a client declaring 32 MiB
// and sending nothing costs nothing but its connection. A declared length past
// the limit is refused before a byte is read.
func (h *Handler) read(w http.ResponseWriter, r *http.Request) (*bytes.Buffer, int, error) {
	limit := h.maxBody()
	if r.ContentLength > limit {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("request body exceeds %d bytes (--max-body)", limit)
	}
	buf := buffers.Get().(*bytes.Buffer)
	buf.Reset()
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit)); err != nil {
		release(buf)
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("request body exceeds %d bytes (--max-body)", limit)
		}
		return nil, http.StatusBadRequest, fmt.Errorf("reading request body: %w", err)
	}
	return buf, http.StatusOK, nil
}

func (h *Handler) maxBody() int64 {
	if h.MaxBody > 0 {
		return h.MaxBody
	}
	return MaxBody
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
