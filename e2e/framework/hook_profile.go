//go:build e2e

package framework

// The fleet benchmark's CPU profiles (STACKDOME_FLEET_PROFILE=<dir>): the
// chart's hooks pods run with --pprof-listen on HooksPprofPort (extraArgs),
// and the test reads their /debug/pprof/profile from the node.

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// HooksPprofPort is the hooks pods' --pprof-listen port in a profiled run.
const HooksPprofPort = "6060"

// ProfileWindow is one CPU profile's length: the last one started
// before the phase ends is let finish, so a phase is profiled at most this
// much past its end.
const ProfileWindow = 5 * time.Second

// ProfileArgs are the chart values of a profiled run (none without
// a directory).
func ProfileArgs(dir string) []string {
	if dir == "" {
		return nil
	}
	return []string{"extraArgs={--pprof-listen=:" + HooksPprofPort + "}"}
}

// ProfileHooks takes CPU profiles of each hooks pod, one window after
// another, into dir/<phase>-<pod>-<n>.pb.gz until the returned function is
// called; that function waits for the last windows, logs where the files
// are and the top of their merged profile (go tool pprof -top, every pod
// and window together). With dir empty it does nothing.
func (f *NodeFixture) ProfileHooks(dir, phase string, pods []Obj) func() {
	t := f.t
	t.Helper()
	if dir == "" {
		return func() {}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	var files []string
	for _, p := range pods {
		url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", net.JoinHostPort(PodIP(p), HooksPprofPort), int(ProfileWindow/time.Second))
		wg.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				b, err := f.profileOnce(url)
				if err != nil {
					t.Errorf("profiling %s: %v", PodName(p), err)
					return
				}
				file := filepath.Join(dir, fmt.Sprintf("%s-%s-%03d.pb.gz", phase, PodName(p), n))
				if err := os.WriteFile(file, b, 0o644); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				files = append(files, file)
				mu.Unlock()
			}
		})
	}
	stop := func() {
		cancel()
		wg.Wait()
		if len(files) == 0 {
			return
		}
		out, err := exec.Command("go", append([]string{"tool", "pprof", "-top", "-nodecount=40"}, files...)...).CombinedOutput()
		if err != nil {
			t.Errorf("go tool pprof: %v\n%s", err, out)
		}
		t.Logf("fleet: CPU profiles (%s): %d windows of %s in %s/%s-*.pb.gz; go tool pprof -top of them all:\n%s",
			phase, len(files), ProfileWindow, dir, phase, out)
	}
	return stop
}

// profileOnce is one window's profile, read from the node.
func (f *NodeFixture) profileOnce(url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), ProfileWindow+30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := f.Node.HTTPClient().Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%d %.200s", resp.StatusCode, b)
	}
	return b, err
}
