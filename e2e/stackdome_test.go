//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// stackdomeServer is a running `stackdome serve` built from the repository.
type stackdomeServer struct {
	base string // http://127.0.0.1:<port>
	proc *proc
}

var stackdomeBin struct {
	once sync.Once
	path string
	err  error
}

// buildStackdome builds the repository's main package once per run.
func buildStackdome(t *testing.T) string {
	t.Helper()
	stackdomeBin.once.Do(func() {
		out := filepath.Join(suite.tmp, "stackdome")
		cmd := exec.Command("go", "build", "-o", out, ".")
		cmd.Dir = suite.root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			stackdomeBin.err = fmt.Errorf("go build stackdome: %w\n%s", err, msg)
			return
		}
		stackdomeBin.path = out
	})
	if stackdomeBin.err != nil {
		t.Fatal(stackdomeBin.err)
	}
	return stackdomeBin.path
}

// startStackdome runs `stackdome serve` on free loopback ports with extra
// flags, waits for /readyz, and stops it when the test ends.
func startStackdome(t *testing.T, flags ...string) *stackdomeServer {
	t.Helper()
	bin := buildStackdome(t)
	ports, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	listen := "127.0.0.1:" + strconv.Itoa(ports[0])
	args := append([]string{"serve",
		"--listen", listen,
		"--error-pages-listen", "127.0.0.1:" + strconv.Itoa(ports[1]),
		"--metrics-listen", "127.0.0.1:" + strconv.Itoa(ports[2]),
		// Nothing routes to this instance: stop at once when the test ends.
		"--drain-delay", "0s",
		"--log-format", "text",
	}, flags...)
	dir := t.TempDir()
	p, err := startProc(dir, "stackdome", bin, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.stop(10 * time.Second)
		if t.Failed() {
			t.Logf("stackdome log:\n%s", indent(p.tail(40)))
		}
	})
	s := &stackdomeServer{base: "http://" + listen, proc: p}
	waitOK(t, p, 30*time.Second, s.base+"/readyz")
	return s
}

// post sends a hook request and decodes a 200 answer.
func (s *stackdomeServer) post(ctx context.Context, path string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+path, bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s: %s", path, resp.Status, bytes.TrimSpace(respBody))
	}
	return decodeJSON(respBody, out)
}
