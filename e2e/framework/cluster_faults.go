//go:build e2e

package framework

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// The control plane's faults, for the fault suite (e2e/node
// TestFaultsSurvived): kube-apiserver restarted as an upgrade restarts it,
// and etcd stalled as a slow disk or a paused VM stalls it.

// RestartAPIServer stops kube-apiserver (SIGTERM, as a static pod's
// replacement does, SIGKILL after 30 s), starts it again with the same
// flags, and returns once /readyz answers 200, or an error after timeout.
// Every client (the kubelet, kube-proxy, Metacontroller, Traefik) loses
// its watches meanwhile and lists again.
func (c *Cluster) RestartAPIServer(ctx context.Context, timeout time.Duration) error {
	p := c.proc("kube-apiserver")
	if p == nil {
		return fmt.Errorf("no kube-apiserver in the control plane")
	}
	if err := p.restart(30 * time.Second); err != nil {
		return err
	}
	return WaitUntil(timeout, 250*time.Millisecond, "kube-apiserver /readyz after its restart", func() (bool, error) {
		if done, err := p.Exited(); done {
			return false, fmt.Errorf("kube-apiserver exited (%v):\n%s", err, Indent(p.Tail(30)))
		}
		var raw []byte
		err := c.Kube.Do(ctx, "GET", "/readyz", "", nil, &raw)
		return err == nil, err
	})
}

// StallEtcd stops etcd (SIGSTOP) for d, then continues it (SIGCONT), even
// if ctx ends first: the API server's reads and writes hang meanwhile.
func (c *Cluster) StallEtcd(ctx context.Context, d time.Duration) error {
	p := c.proc("etcd")
	if p == nil {
		return fmt.Errorf("no etcd in the control plane")
	}
	pgid := p.Pid()
	if err := syscall.Kill(-pgid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("stopping etcd: %w", err)
	}
	defer syscall.Kill(-pgid, syscall.SIGCONT)
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	return nil
}

func (c *Cluster) proc(name string) *Proc {
	for _, p := range c.Procs {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// restart stops the process and starts it again in place, with the same
// binary, arguments and environment, its output appended to its log.
func (p *Proc) restart(grace time.Duration) error {
	p.Stop(grace)
	f, err := os.OpenFile(p.log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("reopening the log of %s: %w", p.Name, err)
	}
	cmd := exec.Command(p.cmd.Path, p.cmd.Args[1:]...)
	cmd.Env = p.cmd.Env
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = p.cmd.SysProcAttr
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("starting %s again: %w", p.Name, err)
	}
	done := make(chan struct{})
	p.cmd, p.done, p.err = cmd, done, nil
	go func() {
		err := cmd.Wait()
		f.Close()
		p.err = err
		close(done)
	}()
	return nil
}
