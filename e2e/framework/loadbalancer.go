//go:build e2e

package framework

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// LoadBalancer is a cloud's load balancer for every Service of type
// LoadBalancer: it listens on its address at each port of the Service,
// forwards to the node's NodePort for it (Node.Publish), and then writes its
// address into the Service's status, as cloud-provider-kind does on kind.
type LoadBalancer struct {
	f      *NodeFixture
	ip     string
	cancel context.CancelFunc
	done   chan struct{}

	mu        sync.Mutex
	nodePorts map[int]int // port → the NodePort it forwards to
	listeners []net.Listener
	written   map[string]bool // Services whose status names ip
	errs      map[string]int
}

// StartLoadBalancer starts a LoadBalancer at ip, which the test's end
// stops.
func (f *NodeFixture) StartLoadBalancer(ip string) *LoadBalancer {
	t := f.t
	ctx, cancel := context.WithCancel(context.Background())
	lb := &LoadBalancer{f: f, ip: ip, cancel: cancel, done: make(chan struct{}), nodePorts: map[int]int{}, written: map[string]bool{}, errs: map[string]int{}}
	go func() {
		defer close(lb.done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			lb.sync(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(lb.Stop)
	return lb
}

// Stop stops serving and closes the listeners.
func (lb *LoadBalancer) Stop() {
	lb.cancel()
	<-lb.done
	lb.mu.Lock()
	defer lb.mu.Unlock()
	for _, l := range lb.listeners {
		l.Close()
	}
}

func (lb *LoadBalancer) fail(what string, err error) {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	lb.errs[what+": "+err.Error()]++
}

// Report says which Services it served and what went wrong.
func (lb *LoadBalancer) Report() string {
	lb.mu.Lock()
	defer lb.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "%s serves %d Services, ports %v", lb.ip, len(lb.written), lb.nodePorts)
	for e, n := range lb.errs {
		fmt.Fprintf(&b, "\n\t%d× %s", n, Clip(e, 600))
	}
	return b.String()
}

// sync serves each port of every Service of type LoadBalancer, then writes
// the address into the Service's status.
func (lb *LoadBalancer) sync(ctx context.Context) {
	svcs, err := lb.f.Kube.List(ctx, "/api/v1/services", "")
	if err != nil {
		if ctx.Err() == nil {
			lb.fail("listing Services", err)
		}
		return
	}
	nodeIP := lb.f.Node.IP().String()
	for _, svc := range svcs {
		if Dig(svc, "spec", "type") != "LoadBalancer" {
			continue
		}
		ns, name := fmt.Sprint(Dig(svc, "metadata", "namespace")), fmt.Sprint(Dig(svc, "metadata", "name"))
		ready := true
		for _, p := range ToSlice(Dig(svc, "spec", "ports")) {
			port, _ := strconv.Atoi(fmt.Sprint(Dig(p, "port")))
			nodePort, _ := strconv.Atoi(fmt.Sprint(Dig(p, "nodePort")))
			if port == 0 || nodePort == 0 {
				ready = false
				continue
			}
			lb.mu.Lock()
			_, listening := lb.nodePorts[port]
			lb.nodePorts[port] = nodePort
			lb.mu.Unlock()
			if listening {
				continue
			}
			l, err := lb.f.Node.Publish(net.JoinHostPort(lb.ip, strconv.Itoa(port)), func() string {
				lb.mu.Lock()
				defer lb.mu.Unlock()
				return net.JoinHostPort(nodeIP, strconv.Itoa(lb.nodePorts[port]))
			})
			if err != nil {
				lb.fail("listening for "+ns+"/"+name, err)
				lb.mu.Lock()
				delete(lb.nodePorts, port)
				lb.mu.Unlock()
				ready = false
				continue
			}
			lb.mu.Lock()
			lb.listeners = append(lb.listeners, l)
			lb.mu.Unlock()
		}
		if !ready || len(ToSlice(Dig(svc, "status", "loadBalancer", "ingress"))) > 0 {
			continue
		}
		patch := Obj{"status": Obj{"loadBalancer": Obj{"ingress": []any{Obj{"ip": lb.ip, "ipMode": "VIP"}}}}}
		if _, err := lb.f.Kube.MergePatch(ctx, "/api/v1/namespaces/"+ns+"/services/"+name+"/status", patch); err != nil {
			lb.fail("writing the address of "+ns+"/"+name, err)
			continue
		}
		lb.mu.Lock()
		lb.written[ns+"/"+name] = true
		lb.mu.Unlock()
	}
}
