//go:build e2e

package framework

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"
)

// Running code inside a network namespace: calling a function there from a
// locked OS thread (Node.DialContext dials the node's pods so).

// inNetns runs fn on an OS thread moved into netns and back. A socket fn
// makes keeps the namespace it was made in.
func inNetns(netns string, fn func() error) error {
	ch := make(chan error, 1)
	go func() {
		// A thread whose namespace could not be restored stays locked, and
		// the runtime ends it with this goroutine instead of reusing it.
		runtime.LockOSThread()
		err := inNetnsLocked(netns, fn)
		if errors.Is(err, errThreadTainted) {
			ch <- err
			return
		}
		runtime.UnlockOSThread()
		ch <- err
	}()
	return <-ch
}

var errThreadTainted = errors.New("could not move the thread back to the root network namespace")

func inNetnsLocked(netns string, fn func() error) error {
	self, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return err
	}
	defer self.Close()
	target, err := os.Open(netns)
	if err != nil {
		return err
	}
	defer target.Close()
	if err := setns(target); err != nil {
		return fmt.Errorf("entering network namespace %s: %w", netns, err)
	}
	ferr := fn()
	if err := setns(self); err != nil {
		return errThreadTainted
	}
	return ferr
}

// setns moves the calling thread into the namespace f refers to. The syscall
// package has no number for setns(2): it is 308 on amd64 and 268 on arm64.
func setns(f *os.File) error {
	nr, ok := map[string]uintptr{"amd64": 308, "arm64": 268}[runtime.GOARCH]
	if !ok {
		return fmt.Errorf("setns: syscall number unknown on %s", runtime.GOARCH)
	}
	if _, _, e := syscall.RawSyscall(nr, f.Fd(), syscall.CLONE_NEWNET, 0); e != 0 {
		return e
	}
	return nil
}
