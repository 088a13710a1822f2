package hooks

import (
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"
)

// Router serves the hooks, health and metrics on one port: POST /sync, POST
// /customize, GET /healthz (the process lives), GET /readyz (ready() says
// whether to take traffic; false while draining) and GET /metrics.
func Router(h *Handler, ready func() bool, metrics http.Handler) http.Handler {
	r := chi.NewRouter()
	r.Use(recoverer(h.logger()))
	r.Post("/sync", h.ServeSync)
	r.Post("/customize", h.ServeCustomize)
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) { text(w, http.StatusOK, "ok") })
	r.Get("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if ready != nil && !ready() {
			text(w, http.StatusServiceUnavailable, "draining")
			return
		}
		text(w, http.StatusOK, "ready")
	})
	if metrics != nil {
		r.Method(http.MethodGet, "/metrics", metrics)
	}
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) { text(w, http.StatusNotFound, "not found") })
	r.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		text(w, http.StatusMethodNotAllowed, "method not allowed")
	})
	return r
}

// recoverer turns a panic — always a bug of ours, never the client's input —
// into a 500 and an error log instead of a dead connection.
func recoverer(log *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					if v == http.ErrAbortHandler {
						panic(v)
					}
					log.Error("panic serving hook", "path", r.URL.Path, "err", v)
					text(w, http.StatusInternalServerError, "internal error")
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

func text(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	w.Write([]byte(msg + "\n"))
}
