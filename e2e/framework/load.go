//go:build e2e

package framework

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Load sends GET / with a Host at a steady rate through Traefik, from the
// node, on kept-alive connections, and counts the answers by the pod that
// gave them (portapp answers "<pod> port <n>").
type Load struct {
	total  atomic.Int64
	mu     sync.Mutex
	failed []string
	by     map[string]int
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// StartLoad starts perSecond requests a second to host.
func (f *NodeFixture) StartLoad(host string, perSecond int) *Load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &Load{by: map[string]int{}, cancel: cancel}
	tick := time.NewTicker(time.Second / time.Duration(perSecond))
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				// Not the test's context: a request in flight at the end
				// still counts.
				code, body, err := f.ThroughTraefik(context.Background(), host, "/")
				l.total.Add(1)
				l.mu.Lock()
				defer l.mu.Unlock()
				if err != nil || code != http.StatusOK {
					l.failed = append(l.failed, fmt.Sprintf("%d %q %v", code, strings.TrimSpace(body), err))
					return
				}
				pod, _, _ := strings.Cut(body, " ")
				l.by[pod]++
			}()
		}
	}()
	return l
}

// Total is the requests made so far.
func (l *Load) Total() int64 { return l.total.Load() }

// Reset forgets the requests made so far.
func (l *Load) Reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total.Store(0)
	l.failed = nil
}

// Servers are the answers so far by pod.
func (l *Load) Servers() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for k, v := range l.by {
		out[k] = v
	}
	return out
}

// Stop ends the load, waits for the requests in flight, and returns the
// requests made and the failed ones.
func (l *Load) Stop() (int64, []string) {
	l.cancel()
	l.wg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total.Load(), l.failed
}
