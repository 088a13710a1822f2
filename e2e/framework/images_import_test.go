//go:build e2e

package framework

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestImagesImport imports every archive BuildImages makes into a
// throwaway containerd, as Node.Import does (`ctr -n k8s.io images import`,
// no platform flag), and checks `ctr images ls` names each with its digest.
// Then it runs two images with runc (`ctr run`): stackdome's multi-platform
// index runs its linux/amd64 binary, and portapp's entrypoint runs as uid
// 65532 on a read-only root filesystem. containerd has its own root, state
// and socket under a temporary directory, and its own mount namespace
// (unshare --mount --propagation private), so that no mount it makes
// reaches the machine; the test fails if `mount` or the cgroup hierarchy
// differ afterwards.
//
// Needs root and containerd, ctr, runc, unshare; run it alone:
//
//	flock /tmp/stackdome-heavy.lock go test -tags e2e -count=1 -run '^TestImagesImport$' -v ./e2e/framework/
func TestImagesImport(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run containerd")
	}
	for _, bin := range []string{"containerd", "ctr", "runc", "unshare"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Skipf("needs %s: %v", bin, err)
		}
	}
	archives, err := BuildImages(context.Background(), repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	mountsBefore, cgroupsBefore := machineState(t)
	c := startContainerd(t)

	for _, a := range archives {
		start := time.Now()
		c.must("images", "import", a.Path)
		t.Logf("imported %s in %s", a.Ref, time.Since(start).Round(time.Millisecond))
	}
	listed := map[string]string{}
	for _, l := range strings.Split(c.must("images", "ls", "-q"), "\n") {
		if l != "" {
			listed[l] = ""
		}
	}
	for _, l := range strings.Split(c.must("images", "ls"), "\n")[1:] {
		if f := strings.Fields(l); len(f) >= 3 {
			listed[f[0]] = f[2]
		}
	}
	for _, a := range archives {
		if got, ok := listed[a.Ref]; !ok || got != a.Digest {
			t.Errorf("ctr images ls: %s is %q (listed %v), want %s", a.Ref, got, ok, a.Digest)
		}
	}

	stackdome, err := StackdomeImage(context.Background(), repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimPrefix(stackdome[strings.LastIndex(stackdome, ":"):], ":")
	if out := c.must("run", "--rm", "--cgroup", "", stackdome, "e2e-stackdome", "/stackdome", "version"); !strings.Contains(out, version) {
		t.Errorf("stackdome version in its image printed %q, want %s", out, version)
	}

	// No arguments: the image's entrypoint alone, which refuses to serve
	// nothing: proof /portapp is what runs.
	out, err := c.ctr("run", "--rm", "--read-only", "--cgroup", "", ImagePortApp, "e2e-portapp-bare")
	if err == nil || !strings.Contains(out, "portapp: want at least one --port") {
		t.Errorf("portapp's entrypoint without flags: %v %q, want its refusal", err, out)
	}
	// Serving on a read-only root as the image's user, then SIGTERM under
	// --on-term exit.
	run := c.command("run", "--rm", "--read-only", "--cgroup", "", ImagePortApp, "e2e-portapp",
		"/portapp", "--port", "8080", "--on-term", "exit")
	var logs syncBuffer
	run.Stdout, run.Stderr = &logs, &logs
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(logs.String(), "msg=serving") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	c.must("task", "kill", "e2e-portapp")
	if err := run.Wait(); err != nil {
		t.Errorf("portapp after SIGTERM: %v\n%s", err, logs.String())
	}
	if !strings.Contains(logs.String(), "uid=65532") {
		t.Errorf("portapp did not serve as uid 65532:\n%s", logs.String())
	}

	c.stop()
	mountsAfter, cgroupsAfter := machineState(t)
	if mountsAfter != mountsBefore {
		t.Errorf("mounts changed:\nbefore:\n%s\nafter:\n%s", mountsBefore, mountsAfter)
	}
	if cgroupsAfter != cgroupsBefore {
		t.Errorf("cgroups changed:\nbefore: %s\nafter: %s", cgroupsBefore, cgroupsAfter)
	}
}

// machineState is what containerd and runc could leave behind: the mount
// table and the cgroups directly under each hierarchy.
func machineState(t *testing.T) (mounts, cgroups string) {
	t.Helper()
	m, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob("/sys/fs/cgroup/*/*/")
	return string(m), strings.Join(dirs, " ")
}

// testContainerd is a containerd of the test's own.
type testContainerd struct {
	t    *testing.T
	dir  string // root, state, socket, config and log
	sock string
	cmd  *exec.Cmd
	log  *os.File
	done bool
}

// startContainerd starts a containerd of the test's own; cleanup stops it
// and removes its directories.
func startContainerd(t *testing.T) *testContainerd {
	t.Helper()
	dir, err := os.MkdirTemp("", "stackdome-containerd-")
	if err != nil {
		t.Fatal(err)
	}
	c := &testContainerd{t: t, dir: dir, sock: filepath.Join(dir, "containerd.sock")}
	cfg := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.grpc.v1.cri", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp"]
[grpc]
  address = %[3]q
[ttrpc]
  address = %[4]q
[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), c.sock, c.sock+".ttrpc", filepath.Join(dir, "opt"))
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if c.log, err = os.Create(filepath.Join(dir, "containerd.log")); err != nil {
		t.Fatal(err)
	}
	c.cmd = exec.Command("unshare", "--mount", "--propagation", "private", "containerd", "--config", filepath.Join(dir, "config.toml"))
	c.cmd.Stdout, c.cmd.Stderr = c.log, c.log
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.stop)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if _, err := c.ctr("version"); err == nil {
			return c
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(c.log.Name())
			t.Fatalf("containerd did not answer in 30s:\n%s", log)
		}
	}
}

// command is ctr with args against this containerd, in namespace k8s.io
// (the kubelet's).
func (c *testContainerd) command(args ...string) *exec.Cmd {
	return exec.Command("ctr", append([]string{"--address", c.sock, "-n", "k8s.io"}, args...)...)
}

// ctr runs ctr and returns its stdout and stderr.
func (c *testContainerd) ctr(args ...string) (string, error) {
	out, err := c.command(args...).CombinedOutput()
	return string(out), err
}

// must runs ctr and returns its output, failing the test on an error.
func (c *testContainerd) must(args ...string) string {
	c.t.Helper()
	out, err := c.ctr(args...)
	if err != nil {
		c.t.Fatalf("ctr %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// stop stops containerd (SIGTERM, SIGKILL after 20s) and removes its
// directories; a second call does nothing.
func (c *testContainerd) stop() {
	if c.done {
		return
	}
	c.done = true
	c.cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		c.cmd.Process.Kill()
		<-exited
	}
	c.log.Close()
	if err := os.RemoveAll(c.dir); err != nil {
		c.t.Errorf("removing containerd's directories: %v", err)
	}
}

// syncBuffer is a bytes.Buffer a process writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
