//go:build e2e

package framework

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"
)

// The specs of apps of the test image portapp (e2e/images/portapp), whose
// ports open at once, late, never, or on request.

// PortApp is the spec of an app of the test image: ports as the image's
// args name them (e2e/images/portapp: a port, `port=never`, or
// `port=after:<duration>`), declared as ports (the first public).
func PortApp(args []string, ports ...Obj) Obj {
	ps := make([]any, len(ports))
	for i, p := range ports {
		ps[i] = p
	}
	return Obj{"type": "Service", "image": ImagePortApp, "args": ToAny(args), "ports": ps}
}

// PortArgs are portapp's arguments opening each port as said: "8080",
// "9090=never", "7070=after:20s".
func PortArgs(ports ...string) []string {
	var out []string
	for _, p := range ports {
		out = append(out, "--port", p)
	}
	return out
}

// ToAny is s as the []any a decoded JSON array holds.
func ToAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// PortAppControlPort is the control port the tests give portapp
// (`--control`), which opens and closes its ports on request: undeclared,
// reached from the node (PortControl).
const PortAppControlPort = 8079

// SetPort asks portapp in every pod of app, on its control port, to open
// or close port.
func (f *NodeFixture) SetPort(ns, app string, port int, action string) {
	t := f.t
	t.Helper()
	pods, err := f.Kube.List(t.Context(), "/api/v1/namespaces/"+ns+"/pods", "app.kubernetes.io/instance="+app)
	if err != nil {
		t.Fatal(err)
	}
	if len(pods) == 0 {
		t.Fatalf("no pod of %s", app)
	}
	for _, p := range pods {
		ip, _ := Dig(p, "status", "podIP").(string)
		if err := f.PortControl(t.Context(), ip, port, action); err != nil {
			t.Fatalf("%s: %v", PodName(p), err)
		}
	}
}

// PortControl asks portapp at ip, on its control port, to open or close
// port, from the node.
func (f *NodeFixture) PortControl(ctx context.Context, ip string, port int, action string) error {
	url := "http://" + net.JoinHostPort(ip, strconv.Itoa(PortAppControlPort)) + "/ports/" + strconv.Itoa(port) + "/" + action
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, nil)
	resp, err := f.Node.HTTPClient().Do(req)
	if err != nil {
		return fmt.Errorf("%s port %d: %w", action, port, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("%s port %d: %s", action, port, resp.Status)
	}
	return nil
}

// ExitPodOf waits for a pod the label selector picks in ns that has an
// address and has not ended (a migration's pod is Pending while its init
// container runs), and POSTs /exit to its portapp's control port from the
// node: portapp exits 0.
func (f *NodeFixture) ExitPodOf(ns, selector string, timeout time.Duration) {
	t := f.t
	t.Helper()
	f.WaitFor(timeout, "portapp of "+selector+" told to exit", func() (bool, error) {
		pods, err := f.Kube.List(t.Context(), "/api/v1/namespaces/"+ns+"/pods", selector)
		if err != nil {
			return false, err
		}
		for _, p := range pods {
			ip, _ := Dig(p, "status", "podIP").(string)
			if phase := Dig(p, "status", "phase"); ip == "" || phase == "Succeeded" || phase == "Failed" {
				continue
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+net.JoinHostPort(ip, strconv.Itoa(PortAppControlPort))+"/exit", nil)
			resp, err := f.Node.HTTPClient().Do(req)
			cancel()
			if err != nil {
				return false, err
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusNoContent {
				return true, nil
			}
			return false, fmt.Errorf("POST /exit: %s", resp.Status)
		}
		return false, fmt.Errorf("no pod of %s with an address that has not ended (%d pods)", selector, len(pods))
	})
}
