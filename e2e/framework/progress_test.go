//go:build e2e

package framework

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// lines collects what a Progress prints.
type lines struct {
	mu  sync.Mutex
	got []string
}

func (l *lines) print(s string) { l.mu.Lock(); l.got = append(l.got, s); l.mu.Unlock() }
func (l *lines) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.got...)
}

// TestProgressOfABuild: a build script's stderr passes through unchanged,
// and while a binary is built its name, N of M and the time so far are
// printed every period; nothing between binaries or after Stop.
func TestProgressOfABuild(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l lines
		var passed strings.Builder
		p := NewProgress("e2e/tools", 30*time.Second, l.print)
		w := &buildWatch{out: func(b []byte) { passed.Write(b) }, progress: p, products: buildProducts["tools"]}
		script := []struct {
			line  string
			after time.Duration
		}{
			{"e2e/tools: building etcd (./etcd) into /c/1\n", 20 * time.Second},
			{"e2e/tools: built etcd in 20s\n", 15 * time.Second},
			{"e2e/tools: building kube-apiserver (k8s.io/kubernetes/cmd/kube-apiserver) into /c/1\n", 95 * time.Second},
			{"e2e/tools: built kube-apiserver in 95s\n", 40 * time.Second},
		}
		var want strings.Builder
		for _, s := range script {
			// Written in two pieces: a line may arrive split.
			fmt.Fprint(w, s.line[:7])
			fmt.Fprint(w, s.line[7:])
			want.WriteString(s.line)
			time.Sleep(s.after)
			synctest.Wait()
		}
		p.Stop()
		time.Sleep(time.Minute)
		if diff := cmp.Diff(want.String(), passed.String()); diff != "" {
			t.Errorf("stderr passed on (-want +got):\n%s", diff)
		}
		// Ticks at 30, 60, 90, 120, 150 s: etcd ended at 20 s, kube-apiserver
		// ran from 35 s to 130 s.
		wantLines := []string{
			"e2e/tools: building kube-apiserver (2 of 3), 25 s so far",
			"e2e/tools: building kube-apiserver (2 of 3), 55 s so far",
			"e2e/tools: building kube-apiserver (2 of 3), 85 s so far",
		}
		if diff := cmp.Diff(wantLines, l.all()); diff != "" {
			t.Errorf("progress lines (-want +got):\n%s", diff)
		}
	})
}

// TestProgressCounts: a step's count is read at each report.
func TestProgressCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var l lines
		p := NewProgress("fleet", 30*time.Second, l.print)
		defer p.Stop()
		n := 0
		var mu sync.Mutex
		p.Step("creating apps", func() string { mu.Lock(); defer mu.Unlock(); return fmt.Sprintf("%d of 200", n) })
		time.Sleep(time.Second)
		for _, at := range []int{40, 130} {
			mu.Lock()
			n = at
			mu.Unlock()
			time.Sleep(30 * time.Second)
			synctest.Wait()
		}
		p.Step("converging", nil)
		time.Sleep(30 * time.Second)
		synctest.Wait()
		want := []string{"fleet: creating apps (40 of 200), 30 s so far", "fleet: creating apps (130 of 200), 60 s so far", "fleet: converging, 29 s so far"}
		if diff := cmp.Diff(want, l.all()); diff != "" {
			t.Errorf("progress lines (-want +got):\n%s", diff)
		}
	})
}
