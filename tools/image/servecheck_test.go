package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// goldenSync is the fixture the README curls: a sync request and the
// answer stackdome gives it at any time (no children it waits for).
const goldenSync = "testdata/sync/rollout-in-progress"

// checkServe runs the Dockerfile's image for platform with Podman on the
// host's network, every server on 127.0.0.1 at a port the kernel picks, the
// hooks in plain HTTP as make run serves them (the
// "serving" log line names them), as the image's entrypoint runs it (serve,
// flags after it): /healthz answers ok, the golden sync request gets its
// golden answer, the process runs as uid 65532, and SIGTERM (podman stop)
// ends it cleanly.
func checkServe(t *testing.T, e *engine, platform string) {
	t.Helper()
	name := "stackdome-serve-" + filepath.Base(e.dir)
	cmd := e.command("podman", "run", "--rm", "--pull", "never", "--network", "host", "--cgroup-parent", e.cgroupParent,
		"--name", name, "--platform", platform, dockerfileList,
		"--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--error-pages-listen", "127.0.0.1:0", "--drain-delay", "0s",
		"--insecure-plain-http") // the hooks' TLS is the binary's, tested there; this checks the image runs it
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	defer func() {
		e.command("podman", "stop", "--time", "10", name).Run()
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("the container did not stop cleanly on SIGTERM: %v\n%s", err, stderr.String())
			}
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Errorf("the container did not stop within 30 s of podman stop")
		}
	}()

	serving := make(chan map[string]any, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == "serving" {
				serving <- line
				break
			}
		}
		io.Copy(io.Discard, stdout)
		exited <- cmd.Wait()
	}()
	var addrs map[string]any
	select {
	case addrs = <-serving:
	case err := <-exited:
		exited <- err
		t.Fatalf("the container exited before serving: %v\n%s", err, stderr.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("no \"serving\" line within 60 s\n%s", stderr.String())
	}
	hooks, _ := addrs["hooks"].(string)
	if !strings.HasPrefix(hooks, "127.0.0.1:") {
		t.Fatalf("serving on %v, want the hooks on 127.0.0.1", addrs)
	}

	resp, err := http.Get("http://" + hooks + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
		t.Errorf("GET /healthz: %d %q, want 200 ok", resp.StatusCode, body)
	}

	checkGoldenSync(t, "http://"+hooks+"/sync")

	pid := strings.TrimSpace(e.run(t, "podman", "inspect", "--format", "{{.State.Pid}}", name))
	status, err := os.ReadFile(filepath.Join("/proc", pid, "status"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) == 5 && (f[0] == "Uid:" || f[0] == "Gid:") {
			if f[1] != "65532" || f[2] != "65532" {
				t.Errorf("the server runs with %s, want 65532", line)
			}
		}
	}
}

// checkGoldenSync posts the golden request to url and compares the answer
// with the golden answer as JSON, as the README's curl example promises.
func checkGoldenSync(t *testing.T, url string) {
	t.Helper()
	req := readFile(t, filepath.Join(repoRoot, goldenSync+".request.json"))
	resp, err := http.Post(url, "application/json", bytes.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /sync: %d %s", resp.StatusCode, got)
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("POST /sync answered %s: %v", got, err)
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(repoRoot, goldenSync+".response.json")), &w); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("POST /sync with %s.request.json (-golden +got):\n%s", goldenSync, diff)
	}
}
