//go:build e2e

package framework

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
)

// BuildTraefik runs e2e/traefik/build.sh, which builds Traefik only when its
// cache lacks it, and returns the directory holding the binary.
func BuildTraefik(root string) (string, error) {
	if dir := os.Getenv("STACKDOME_E2E_TRAEFIK"); dir != "" {
		return dir, nil
	}
	return runBuildScript(root, "traefik", "Traefik")
}

// Traefik is the entry points of a running Traefik (TraefikChart.Install):
// web and websecure take traffic, the traefik entry point serves /ping and,
// with api.insecure, /api.
type Traefik struct {
	Web, Websecure string // http://<pod address>:<port>
	API            string // http://<pod address>:<port>
	Proc           *Proc
}

// Router is one HTTP router as Traefik's API reports it.
type Router struct {
	Name        string   `json:"name"`
	Rule        string   `json:"rule"`
	Status      string   `json:"status"`
	Error       []string `json:"error"`
	Middlewares []string `json:"middlewares"`
	Service     string   `json:"service"`
	Provider    string   `json:"provider"`
	EntryPoints []string `json:"entryPoints"`
}

// Routers reads /api/http/routers.
func (tr *Traefik) Routers() ([]Router, error) {
	resp, err := http.Get(tr.API + "/api/http/routers?per_page=1000")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("/api/http/routers: %s: %s", resp.Status, data)
	}
	var rs []Router
	if err := json.Unmarshal(data, &rs); err != nil {
		return nil, fmt.Errorf("decoding /api/http/routers: %w", err)
	}
	return rs, nil
}
