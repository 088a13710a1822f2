//go:build e2e

package framework

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is one process of the control plane (or stackdome itself), started in
// its own process group with its output in a log file. It dies with the test
// binary (Pdeathsig), so not even a panic or a -timeout leaks it.
type Proc struct {
	Name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // valid once done is closed
}

// startProc runs bin with args and the test's environment, logging to
// <dir>/<name>.log.
func startProc(dir, name, bin string, args ...string) (*Proc, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("creating log for %s: %w", name, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Proc{Name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process ID.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process is gone, with its error.
func (p *Proc) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Stop sends SIGTERM to the process group, then SIGKILL after grace.
func (p *Proc) Stop(grace time.Duration) {
	if done, _ := p.Exited(); done {
		return
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
}

// Tail returns the last n lines of the process log, for failure messages.
func (p *Proc) Tail(n int) string {
	data, err := os.ReadFile(p.log)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// FreePorts asks the kernel for n distinct free loopback ports. All listeners
// are held until every port is known, so the same port is never handed out
// twice within one call.
func FreePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("finding a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Cleanups is a LIFO stack of teardown steps for what TestMain owns.
type Cleanups struct {
	mu  sync.Mutex
	fns []func()
}

// Add pushes a teardown step.
func (c *Cleanups) Add(fn func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fns = append(c.fns, fn)
}

// Run runs the steps added so far, last first, once.
func (c *Cleanups) Run() {
	c.mu.Lock()
	fns := c.fns
	c.fns = nil
	c.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
}

// WaitUntil polls cond every interval until it returns true, returns an error,
// or timeout passes; the last error is reported on timeout.
func WaitUntil(timeout, interval time.Duration, what string, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		if time.Now().After(deadline) {
			if last == nil {
				last = errors.New("condition not met")
			}
			return fmt.Errorf("waiting %s for %s: %w", timeout, what, last)
		}
		time.Sleep(interval)
	}
}

// Indent indents every line of s by a tab, for a log excerpt in a failure.
func Indent(s string) string {
	return "\t" + strings.ReplaceAll(s, "\n", "\n\t")
}

// Clip is s if it has at most n bytes, else its first and last n/2 bytes
// around a line saying how many were left out, for a long value in a
// failure.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n/2] + fmt.Sprintf("\n… %d bytes …\n", len(s)-n) + s[len(s)-n/2:]
}

// WithoutClusterEnv is env without the in-cluster variables and
// KUBECONFIG, which would make a kubectl or helm the suite runs talk to
// another cluster than the one the test names.
func WithoutClusterEnv(env []string) []string {
	var out []string
	for _, e := range env {
		if strings.HasPrefix(e, "KUBERNETES_SERVICE_") || strings.HasPrefix(e, "KUBECONFIG=") {
			continue
		}
		out = append(out, e)
	}
	return out
}
