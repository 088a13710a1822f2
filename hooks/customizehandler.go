package hooks

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/metacontroller"
)

// ServeCustomize answers POST /customize.
func (h *Handler) ServeCustomize(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	code := h.handleCustomize(w, r)
	h.observe("customize", code, start)
}

func (h *Handler) handleCustomize(w http.ResponseWriter, r *http.Request) int {
	t := h.ticket()
	defer t.done()
	body, code, err := h.read(w, r, t)
	if err != nil {
		return h.refuseAdmission(w, "customize", code, err)
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
