//go:build e2e

package framework

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// DocShell is one bash that runs the page's blocks one after another, so
// variables set by one block reach the next. `set -eo pipefail`: the first
// failing command ends the shell, and its ERR trap names the command.
type DocShell struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	status *bufio.Reader // fd 3: one line after each block
	dir    string
	n      int
	out    lockedBuffer
	done   chan struct{}
	err    error // valid once done is closed
}

func (f *NodeFixture) StartDocShell(env []string, dir string) (*DocShell, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	s := &DocShell{dir: dir, status: bufio.NewReader(r), done: make(chan struct{})}
	s.cmd = exec.Command("bash", "--noprofile", "--norc")
	s.cmd.Dir = f.Root
	s.cmd.Env = env
	s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.out
	s.cmd.ExtraFiles = []*os.File{w}
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		s.err = s.cmd.Wait()
		r.Close()
		close(s.done)
	}()
	_, err = io.WriteString(s.stdin, "set -eo pipefail\ntrap 'echo \"e2e: exit status $? from: $BASH_COMMAND\" >&2' ERR\n")
	return s, err
}

// Run runs one block and returns what it printed. A failed command ends
// the shell: every later run fails too.
func (s *DocShell) Run(text string, timeout time.Duration) (string, error) {
	s.n++
	file := filepath.Join(s.dir, fmt.Sprintf("block-%02d.sh", s.n))
	if err := os.WriteFile(file, []byte(text+"\n"), 0o600); err != nil {
		return "", err
	}
	mark := s.out.Len()
	if _, err := fmt.Fprintf(s.stdin, "source %q </dev/null\necho done >&3\n", file); err != nil {
		return s.out.From(mark), fmt.Errorf("the shell is gone: %w", err)
	}
	line := make(chan error, 1)
	go func() {
		_, err := s.status.ReadString('\n')
		line <- err
	}()
	select {
	case err := <-line:
		if err == nil {
			return s.out.From(mark), nil
		}
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
		}
		return s.out.From(mark), fmt.Errorf("the shell exited (%v)", s.err)
	case <-time.After(timeout):
		s.Stop()
		return s.out.From(mark), fmt.Errorf("still running after %s", timeout)
	}
}

func (s *DocShell) Stop() {
	if s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-s.done
}

// lockedBuffer is an io.Writer several goroutines (the shell's stdout and
// stderr copiers) write to.
type lockedBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.buf)
}

func (b *lockedBuffer) From(i int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf[i:])
}
