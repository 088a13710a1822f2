//go:build e2e

package framework

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The sync requests Metacontroller really sent, read from its own log
// (docs/e2e.md, "The hook requests Metacontroller sent").
//
// Metacontroller v4.17.2 logs every webhook call at verbosity 6
// (pkg/hooks/webhook.go, webhookExecutor.Call): "Webhook request" with the
// request body it is about to POST, and, once the answer is read,
// "Webhook response" with the answer's body — each with the hook's
// version, type and URL, the body as raw JSON (json.RawMessage, which zap's
// JSON encoder writes as is: nothing is cut or re-encoded but for
// whitespace and HTML escapes). The production manifests run it at
// --zap-log-level=4, where neither is logged; the tests that read requests
// raise the one flag to 6 for their own duration. The flag changes what is
// logged and nothing else: no code path of Metacontroller tests the level
// but to log.
//
// What the lines do not say, and how the readers here are not fooled:
//   - an answer 429 (or a failed call) has no "Webhook response" line, and
//     no line says the status: only requests are read (a request is logged
//     before it is sent, whatever the answer), and a request is picked by
//     the parent it names — its namespace is the test's own — never by its
//     place next to a response;
//   - the kubelet rotates a container's log at 10 MiB and `kubectl logs`
//     reads the current file only: the log is followed (`kubectl logs -f`,
//     which the kubelet carries across a rotation) from the moment the
//     raised pod is Ready, every line kept in memory as it arrives;
//   - containerd splits a log line longer than 16 KiB into partial lines,
//     which the kubelet joins again when it serves the log: a webhook line
//     that is not one whole JSON object fails the test (HookLog.torn).
const (
	mcLevelProduction = "--zap-log-level=4"
	mcLevelHooks      = "--zap-log-level=6"
)

// hookLine is one webhook line of Metacontroller's log.
type hookLine struct {
	Msg     string `json:"msg"`
	Version string `json:"version"`
	Type    string `json:"type"`
	URL     string `json:"url"`
	Body    Obj    `json:"body"`
	// Read is when the follow delivered the line: a moment after it was
	// logged (the line's own "ts" is whole seconds).
	Read time.Time `json:"-"`
}

// HookLog is the webhook lines of Metacontroller's log since it was raised
// to verbosity 6, in the order logged.
type HookLog struct {
	mu    sync.Mutex
	lines []hookLine
	torn  []string // webhook lines that did not decode: the log is lossy
	ended error    // the follow ended before the test did
}

// TraceHooks restarts the node's Metacontroller (its StatefulSet from the
// production manifests) with mcLevelHooks in place of mcLevelProduction,
// waits for its pod to be Ready, and follows its log until the test ends;
// then it puts the manifests' arguments back and waits for the pod to be
// Ready again. Call it before the test's own objects exist, so that every
// request about them is in the log.
func (f *NodeFixture) TraceHooks() *HookLog {
	t := f.t
	t.Helper()
	f.RequireMetacontroller()
	args := f.MetacontrollerArgs()
	i := slices.Index(args, mcLevelProduction)
	if i < 0 {
		t.Fatalf("Metacontroller runs with args %q, want %s among them", args, mcLevelProduction)
	}
	raised := slices.Clone(args)
	raised[i] = mcLevelHooks
	f.SetMetacontrollerArgs(raised)
	t.Cleanup(func() { f.SetMetacontrollerArgs(args) })

	h := &HookLog{}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, f.Kubectl, "logs", "-f", "-n", "metacontroller", "metacontroller-0")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+f.Cluster.Kubeconfig)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			h.add(sc.Bytes())
		}
		err := cmd.Wait()
		h.mu.Lock()
		defer h.mu.Unlock()
		if ctx.Err() == nil {
			h.ended = fmt.Errorf("kubectl logs -f metacontroller-0 ended: %v %v %s", sc.Err(), err, stderr.String())
		}
	}()
	// Registered after the restore above: runs before it.
	t.Cleanup(func() {
		cancel()
		<-done
		h.mu.Lock()
		defer h.mu.Unlock()
		t.Logf("Metacontroller's log at verbosity 6: %d webhook lines, the longest body %d bytes", len(h.lines), h.longest())
	})
	return h
}

func (h *HookLog) add(b []byte) {
	if !strings.Contains(string(b), `"Webhook re`) {
		return
	}
	l := hookLine{Read: time.Now()}
	err := json.Unmarshal(b, &l)
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case err != nil:
		h.torn = append(h.torn, fmt.Sprintf("%v: %.200s", err, b))
	case l.Msg == "Webhook request" || l.Msg == "Webhook response":
		h.lines = append(h.lines, l)
	}
}

func (h *HookLog) longest() int {
	n := 0
	for _, l := range h.lines {
		if b, err := json.Marshal(l.Body); err == nil {
			n = max(n, len(b))
		}
	}
	return n
}

// SyncRequests are the bodies of the sync requests about the parent
// ns/name that the follow delivered since (so a request sent a moment
// before since may be among them), in the order sent; an error when the
// log is lossy or no longer followed.
func (h *HookLog) SyncRequests(ns, name string, since time.Time) ([]Obj, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.torn) > 0 {
		return nil, fmt.Errorf("%d webhook lines of Metacontroller's log did not decode, first: %s", len(h.torn), h.torn[0])
	}
	if h.ended != nil {
		return nil, h.ended
	}
	var out []Obj
	for _, l := range h.lines {
		if l.Msg != "Webhook request" || l.Type != "sync" || l.Read.Before(since) {
			continue
		}
		if Dig(l.Body, "parent", "metadata", "namespace") == ns && Dig(l.Body, "parent", "metadata", "name") == name {
			out = append(out, l.Body)
		}
	}
	return out, nil
}

// WaitSyncRequest waits up to timeout for a sync request about ns/name,
// sent since, that cond accepts (nil accepts any), and returns the first;
// on timeout the test fails with what cond said of the last one.
func (h *HookLog) WaitSyncRequest(t *testing.T, ns, name string, since time.Time, timeout time.Duration, what string, cond func(Obj) error) Obj {
	t.Helper()
	var found Obj
	if err := WaitUntil(timeout, 250*time.Millisecond, what, func() (bool, error) {
		reqs, err := h.SyncRequests(ns, name, since)
		if err != nil {
			return false, err
		}
		last := fmt.Errorf("no sync request about %s/%s logged", ns, name)
		for _, r := range reqs {
			if cond == nil {
				found = r
				return true, nil
			}
			if last = cond(r); last == nil {
				found = r
				return true, nil
			}
		}
		return false, fmt.Errorf("%d requests, the last: %w", len(reqs), last)
	}); err != nil {
		t.Fatal(err)
	}
	return found
}

// toStrings are the strings of a decoded JSON array.
func toStrings(v any) []string {
	var out []string
	for _, e := range ToSlice(v) {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}
