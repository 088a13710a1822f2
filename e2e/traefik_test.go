//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// traefikDir holds the Traefik binary built by e2e/traefik/build.sh (or
// STACKDOME_E2E_TRAEFIK), or traefikErr why there is none.
var traefikBuild struct {
	dir string
	err error
}

// buildTraefik runs e2e/traefik/build.sh, which builds Traefik only when its
// cache lacks it, and returns the directory holding the binary.
func buildTraefik(root string) (string, error) {
	if dir := os.Getenv("STACKDOME_E2E_TRAEFIK"); dir != "" {
		return dir, nil
	}
	return runBuildScript(root, "traefik", "Traefik")
}

// traefik is a real Traefik v3.7.13 running out of cluster on loopback, its
// kubernetesCRD provider watching the test API server with Traefik's default
// provider flags (allowCrossNamespace, allowExternalNameServices and
// allowEmptyServices all false: none is set). Entry points web and websecure
// (plain HTTP both) take traffic; the api entry point serves /api and /ping.
type traefik struct {
	web, websecure string // http://127.0.0.1:<port>
	api            string // http://127.0.0.1:<port>
	proc           *proc
}

// startTraefik starts Traefik and waits for /ping; it is stopped when the
// test ends, and its log is shown if the test failed.
func startTraefik(t *testing.T) *traefik {
	t.Helper()
	ports, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	// JSON is YAML; Traefik reads the static configuration from the file.
	static := obj{
		"entryPoints": obj{
			"web":       obj{"address": "127.0.0.1:" + strconv.Itoa(ports[0])},
			"websecure": obj{"address": "127.0.0.1:" + strconv.Itoa(ports[1])},
			"traefik":   obj{"address": "127.0.0.1:" + strconv.Itoa(ports[2])},
		},
		"api":       obj{"insecure": true, "dashboard": false},
		"ping":      obj{},
		"log":       obj{"level": "INFO"},
		"providers": obj{"kubernetesCRD": traefikCRDProvider()},
		// Traefik's default checks update.traefik.io for a new version (ten
		// minutes after start): nothing the suite runs may dial off the machine.
		"global": obj{"checkNewVersion": false, "sendAnonymousUsage": false},
	}
	return runTraefik(t, static, &traefik{
		web:       "http://127.0.0.1:" + strconv.Itoa(ports[0]),
		websecure: "http://127.0.0.1:" + strconv.Itoa(ports[1]),
		api:       "http://127.0.0.1:" + strconv.Itoa(ports[2]),
	})
}

// traefikCRDProvider is the kubernetesCRD provider's connection to the test
// API server. The token is given as the value: a token file's trailing
// newline would break the Authorization header.
func traefikCRDProvider() obj {
	c := suite.cluster
	return obj{"endpoint": c.kube.base, "token": c.token, "certAuthFilePath": c.caFile}
}

// runTraefik runs Traefik with the static configuration static, whose
// entry points tr names, and waits for /ping on tr.api.
func runTraefik(t *testing.T, static obj, tr *traefik) *traefik {
	t.Helper()
	if traefikBuild.err != nil {
		t.Fatal(traefikBuild.err)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "traefik.yaml")
	data, err := json.Marshal(static)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, data, 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := startProcEnv(dir, "traefik", withoutClusterEnv(os.Environ()), filepath.Join(traefikBuild.dir, "traefik"), "--configFile="+cfg)
	if err != nil {
		t.Fatal(err)
	}
	tr.proc = p
	t.Cleanup(func() {
		p.stop(10 * time.Second)
		if t.Failed() {
			t.Logf("traefik log:\n%s", indent(p.tail(60)))
		}
	})
	waitOK(t, p, 60*time.Second, tr.api+"/ping")
	return tr
}

// withoutClusterEnv drops what would make Traefik pick another client than
// the one its static configuration names: in-cluster variables and
// KUBECONFIG win over endpoint, token and certAuthFilePath.
func withoutClusterEnv(env []string) []string {
	var out []string
	for _, e := range env {
		if strings.HasPrefix(e, "KUBERNETES_SERVICE_") || strings.HasPrefix(e, "KUBECONFIG=") {
			continue
		}
		out = append(out, e)
	}
	return out
}

// router is one HTTP router as Traefik's API reports it.
type router struct {
	Name        string   `json:"name"`
	Rule        string   `json:"rule"`
	Status      string   `json:"status"`
	Error       []string `json:"error"`
	Middlewares []string `json:"middlewares"`
	Service     string   `json:"service"`
	Provider    string   `json:"provider"`
	EntryPoints []string `json:"entryPoints"`
}

// routers reads /api/http/routers.
func (tr *traefik) routers() ([]router, error) {
	resp, err := http.Get(tr.api + "/api/http/routers?per_page=1000")
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
	var rs []router
	if err := json.Unmarshal(data, &rs); err != nil {
		return nil, fmt.Errorf("decoding /api/http/routers: %w", err)
	}
	return rs, nil
}
