//go:build e2e

package framework

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"syscall"
)

// Running code inside a network namespace: listening, dialing and calling a
// function there from a locked OS thread.

// listenIn opens a TCP listener inside the network namespace netns (a
// /proc/<pid>/ns/net path): the socket is made on an OS thread moved into the
// namespace, and keeps that namespace when the thread moves back. The test
// process serves it like any listener.
func listenIn(netns, addr string) (net.Listener, error) {
	var l net.Listener
	err := inNetns(netns, func() (err error) {
		l, err = net.Listen("tcp", addr)
		return err
	})
	return l, err
}

// dialIn connects to addr from inside the network namespace netns, as a
// process there would (a kubelet's probe runs in the pod's namespace).
func dialIn(ctx context.Context, netns, addr string) (net.Conn, error) {
	var c net.Conn
	err := inNetns(netns, func() (err error) {
		var d net.Dialer
		c, err = d.DialContext(ctx, "tcp", addr)
		return err
	})
	return c, err
}

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
