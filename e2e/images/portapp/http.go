package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// appHandler is what every open port serves: 200 naming the pod and the
// port at any path, except a GET of a path ending in /status/<code>
// (/status/503, /v2/status/503), which answers that code: a readiness
// probe, or a backend that fails on request behind any route prefix.
// Every answer says what reached the app in X-Portapp-Path (the path as
// it arrived, after a proxy's rewriting) and X-Portapp-Host (the Host
// header), so that a test through a proxy sees it with the body
// unchanged.
func appHandler(pod string, port int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Portapp-Path", r.URL.Path)
		w.Header().Set("X-Portapp-Host", r.Host)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		code, ok := statusPath(r.URL.Path)
		if !ok || (r.Method != http.MethodGet && r.Method != http.MethodHead) {
			fmt.Fprintf(w, "%s port %d\n", pod, port)
			return
		}
		if code < 200 || code > 599 {
			http.Error(w, "want /status/<code>, a code from 200 to 599", http.StatusBadRequest)
			return
		}
		w.WriteHeader(code)
		fmt.Fprintf(w, "%s port %d status %d\n", pod, port, code)
	})
}

// statusPath reports whether path asks for a status, its last two
// segments status/<code> with a code not empty, and the code (0 when not
// a number).
func statusPath(path string) (int, bool) {
	rest, last, ok := cutLast(path)
	if !ok {
		return 0, false
	}
	if _, seg, ok := cutLast(rest); !ok || seg != "status" {
		return 0, false
	}
	if last == "" {
		return 0, false
	}
	code, err := strconv.Atoi(last)
	if err != nil {
		return 0, true
	}
	return code, true
}

// cutLast splits path at its last slash: what is before, and the last
// segment; false when path has no slash.
func cutLast(path string) (string, string, bool) {
	i := strings.LastIndexByte(path, '/')
	if i < 0 {
		return "", "", false
	}
	return path[:i], path[i+1:], true
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
