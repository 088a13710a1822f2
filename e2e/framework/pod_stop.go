//go:build e2e

package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// How a stand-in pod ends: deleted from the API server, its containers'
// preStop hooks run, then its processes stopped within their grace.

// Delete is what a kubelet does when the pod is deleted: each container's
// preStop hook (exec or sleep), then SIGTERM and, past the pod's
// terminationGracePeriodSeconds, SIGKILL; then it reports the pod not ready,
// its containers terminated, and removes the pod object.
func (p *Pod) Delete(ctx context.Context) {
	p.stopOnce.Do(func() {
		grace := 30 * time.Second
		if g, ok := Dig(p.spec, "spec", "terminationGracePeriodSeconds").(json.Number); ok {
			if n, err := g.Int64(); err == nil {
				grace = time.Duration(n) * time.Second
			}
		}
		deadline := time.Now().Add(grace)
		for _, name := range p.order {
			p.preStop(ctx, name, deadline)
		}
		p.stopProcesses(time.Until(deadline))
		_, _ = p.kl.kube.MergePatch(ctx, "/api/v1/namespaces/"+p.Namespace+"/pods/"+p.Name+"/status", terminatedStatus(p.spec))
		p.kl.ForceDeletePod(p.Namespace, p.Name)
	})
}

// Stop ends the pod's processes without hooks, leaving the pod object (the
// suite's teardown).
func (p *Pod) Stop() { p.stopOnce.Do(func() { p.stopProcesses(5 * time.Second) }) }

func (p *Pod) stopProcesses(grace time.Duration) {
	p.stopContainers(grace)
	if p.sandbox != nil && p.sandbox.holder != nil {
		p.sandbox.close()
	}
}

// stopContainers ends the pod's processes and handlers, leaving its sandbox
// (a container restart keeps the pod's network namespace).
func (p *Pod) stopContainers(grace time.Duration) {
	if grace < time.Second {
		grace = time.Second
	}
	for _, srv := range p.servers {
		srv.Close() // the process is gone: its listener and connections with it
	}
	for i := len(p.order) - 1; i >= 0; i-- {
		if proc := p.procs[p.order[i]]; proc != nil {
			proc.Stop(grace)
		}
	}
}

// preStop runs the container's lifecycle.preStop: a sleep, or a command in
// the container's own namespaces; bounded by the grace period's deadline.
func (p *Pod) preStop(ctx context.Context, container string, deadline time.Time) {
	cs, _ := Dig(p.spec, "spec", "containers").([]any)
	for _, c := range cs {
		if Dig(c, "name") != container {
			continue
		}
		ctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		if s, ok := Dig(c, "lifecycle", "preStop", "sleep", "seconds").(json.Number); ok {
			n, _ := s.Int64()
			select {
			case <-time.After(time.Duration(n) * time.Second):
			case <-ctx.Done():
			}
			return
		}
		raw, _ := Dig(c, "lifecycle", "preStop", "exec", "command").([]any)
		proc := p.procs[container]
		if len(raw) == 0 || proc == nil {
			return
		}
		argv := []string{"nsenter", "-t", strconv.Itoa(proc.cmd.Process.Pid), "-m", "-n", "--"}
		for _, a := range raw {
			argv = append(argv, fmt.Sprint(a))
		}
		_ = runContext(ctx, argv...)
		return
	}
}
