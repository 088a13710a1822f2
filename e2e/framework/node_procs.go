//go:build e2e

package framework

import (
	"context"
	"fmt"
)

// The node's processes: how each is started inside the node's namespaces
// and cgroup, and how a test learns that one died or the node is not Ready.

// startInside runs bin in the node's mount and network namespaces, in the
// node's cgroup, logging to <dir>/<name>.log.
func (n *Node) startInside(name, bin string, args ...string) (*Proc, error) {
	argv := append([]string{"--mount=" + mountNS(n.mountns), "--net=" + n.cfg.Host.netns, "--", bin}, args...)
	p, err := startProc(n.paths.dir, name, "nsenter", argv...)
	if err != nil {
		return nil, err
	}
	n.procs = append(n.procs, p)
	if err := n.cg.add(p.Pid()); err != nil {
		return nil, err
	}
	return p, nil
}

// ready reports the node's Ready condition.
func (n *Node) ready(ctx context.Context) (bool, error) {
	o, err := n.cfg.Cluster.Kube.Get(ctx, "/api/v1/nodes/"+n.name)
	if err != nil {
		return false, err
	}
	conds, _ := Dig(o, "status", "conditions").([]any)
	for _, c := range conds {
		cm, _ := c.(map[string]any)
		if cm["type"] == "Ready" {
			return cm["status"] == "True", fmt.Errorf("node %s Ready=%v: %v", n.name, cm["status"], cm["message"])
		}
	}
	return false, fmt.Errorf("node %s has no Ready condition yet", n.name)
}

// Healthy reports the first node process that has died.
func (n *Node) Healthy() error {
	for _, p := range n.procs {
		if done, err := p.Exited(); done {
			return fmt.Errorf("%s exited (%v):\n%s", p.Name, err, Indent(p.Tail(30)))
		}
	}
	return nil
}
