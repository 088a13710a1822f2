package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
)

// appHandler is what every open port serves: 200 naming the pod and the
// port at any path, except /status/<code>, which answers that code (a
// readiness probe or a backend that fails on request).
func appHandler(pod string, port int) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, err := strconv.Atoi(r.PathValue("code"))
		if err != nil || code < 200 || code > 599 {
			http.Error(w, "want /status/<code>, a code from 200 to 599", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(code)
		fmt.Fprintf(w, "%s port %d status %d\n", pod, port, code)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "%s port %d\n", pod, port)
	})
	return mux
}

// controlHandler serves the control port:
//
//	GET  /ports              {"8080":"open","9090":"closed"}
//	POST /ports/{port}/open  listen on port now (409 once terminating)
//	POST /ports/{port}/close stop listening on port now
//	POST /exit               exit 0, ending a SIGTERM drain early
//
// plus the app's own answers at any other path, so that the control port
// can also be a probe target that is always open.
func controlHandler(pod string, port int, p *ports, exit func()) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ports", func(w http.ResponseWriter, r *http.Request) {
		state := p.State()
		out := make(map[string]string, len(state))
		for _, k := range sortedKeys(state) {
			out[strconv.Itoa(k)] = state[k]
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("POST /ports/{port}/{action}", func(w http.ResponseWriter, r *http.Request) {
		n, err := parseNumber(r.PathValue("port"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		switch r.PathValue("action") {
		case "open":
			if err := p.Open(n); err == errStopped {
				http.Error(w, err.Error(), http.StatusConflict)
				return
			} else if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
		case "close":
			p.Close(n)
		default:
			http.Error(w, "want POST /ports/<port>/open or /close", http.StatusNotFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("POST /exit", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
		// The answer goes out before exit closes this connection.
		http.NewResponseController(w).Flush()
		exit()
	})
	mux.Handle("/", appHandler(pod, port))
	return mux
}
