//go:build e2e

package framework

// The watch of writes: what the API server stored, event by event, in the
// order etcd wrote it.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"time"
)

// WatchEvent is one change a watch delivered: what the API server stored, in
// its order.
type WatchEvent struct {
	Kind string // the watched collection's name for the test (e.g. "slice")
	Type string // ADDED, MODIFIED, DELETED
	Obj  Obj
	// RV is the object's resourceVersion: the etcd revision of the write.
	// One etcd orders every write of the cluster, so events of different
	// watches merge into the order they were written in (the suite's
	// control plane has exactly one etcd; Kubernetes calls the value
	// opaque, which it is across etcd clusters, not within one).
	RV uint64
	At time.Time // when the test received it
}

// Watcher records every event of one collection from the moment it
// starts (the objects already there arrive as ADDED) until the test ends.
type Watcher struct {
	kind   string
	mu     sync.Mutex
	events []WatchEvent
	err    error
}

// RecordedWatcher is a Watcher of kind that received events and watches
// nothing: for the tests of checks over watches.
func RecordedWatcher(kind string, events ...WatchEvent) *Watcher {
	return &Watcher{kind: kind, events: events}
}

// Kind is the name the test gave the watched collection.
func (w *Watcher) Kind() string { return w.kind }

// WatchPath watches the collection at path (a list path, optionally with a
// labelSelector query) until the test ends, reconnecting from the last
// resourceVersion when the API server ends a watch; a first request
// answered 429 (a new CRD's watch cache starting) is made again for 30 s.
// It fails the test if the watch cannot start.
func (f *NodeFixture) WatchPath(kind, path string) *Watcher {
	t := f.t
	t.Helper()
	w := &Watcher{kind: kind}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	started := make(chan error, 1)
	go func() {
		defer close(done)
		rv := ""
		startBy := time.Now().Add(30 * time.Second)
		for ctx.Err() == nil {
			err := w.stream(ctx, f.Kube, path, &rv, started, time.Now().Before(startBy))
			if errors.Is(err, errCacheNotReady) {
				time.Sleep(200 * time.Millisecond) // polling with a deadline (startBy)
				continue
			}
			started = nil
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				w.mu.Lock()
				w.err = err
				w.mu.Unlock()
				time.Sleep(200 * time.Millisecond)
			}
		}
	}()
	if err := <-started; err != nil {
		t.Fatalf("watching %s: %v", path, err)
	}
	return w
}

// errCacheNotReady is a first watch request answered 429, made again.
var errCacheNotReady = errors.New("watch cache not ready")

// stream runs one watch request from *rv, advancing it; the first call
// reports on started once the API server has answered. A watch of a CRD's
// resources is answered 429 until its watch cache is initialized ("storage
// is (re)initializing", k8s.io/apiserver@v0.37.2 pkg/storage/cacher
// cacher.go Watch), a moment after the CRD is created, as a test's first
// InstallChart has just done: while retryNotReady, such a first answer is
// not reported but returned as errCacheNotReady.
func (w *Watcher) stream(ctx context.Context, k *Kube, path string, rv *string, started chan error, retryNotReady bool) error {
	q := url.Values{"watch": {"1"}, "allowWatchBookmarks": {"true"}}
	if *rv != "" {
		q.Set("resourceVersion", *rv)
	}
	sep := "?"
	if u, err := url.Parse(path); err == nil && u.RawQuery != "" {
		sep = "&"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, k.Base+path+sep+q.Encode(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+k.Token)
	// The suite's client has a 30 s timeout for a whole request; a watch
	// is one long answer.
	resp, err := (&http.Client{Transport: k.HTTP.Transport}).Do(req)
	if err != nil {
		if started != nil {
			started <- err
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("watch %s: %s", path, resp.Status)
		if started != nil && retryNotReady && resp.StatusCode == http.StatusTooManyRequests {
			return fmt.Errorf("%w: %w", errCacheNotReady, err)
		}
		if started != nil {
			started <- err
		}
		return err
	}
	if started != nil {
		started <- nil
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var e struct {
			Type   string `json:"type"`
			Object Obj    `json:"object"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return fmt.Errorf("decoding a watch event of %s: %w", path, err)
		}
		if e.Type == "ERROR" {
			*rv = "" // expired: start again from the current state
			return fmt.Errorf("watch %s: %v", path, e.Object["message"])
		}
		s, _ := Dig(e.Object, "metadata", "resourceVersion").(string)
		*rv = s
		if e.Type == "BOOKMARK" {
			continue
		}
		n, _ := strconv.ParseUint(s, 10, 64)
		w.mu.Lock()
		w.events = append(w.events, WatchEvent{Kind: w.kind, Type: e.Type, Obj: e.Object, RV: n, At: time.Now()})
		w.mu.Unlock()
	}
	return sc.Err()
}

// Events are the events so far, in the order they were received.
func (w *Watcher) Events() []WatchEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]WatchEvent(nil), w.events...)
}

// Merged is the events of every watcher in the order the API server wrote
// them (by resourceVersion); a re-listed object already seen at the same
// resourceVersion appears once.
func Merged(ws ...*Watcher) []WatchEvent {
	var all []WatchEvent
	seen := map[string]bool{}
	for _, w := range ws {
		for _, e := range w.Events() {
			key := fmt.Sprint(w.kind, "/", Dig(e.Obj, "metadata", "uid"), "@", e.RV, e.Type)
			if seen[key] {
				continue
			}
			seen[key] = true
			all = append(all, e)
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].RV < all[j].RV })
	return all
}

// QuietFor waits until w has received no event for quiet, at most max.
func (f *NodeFixture) QuietFor(w *Watcher, quiet, max time.Duration) {
	t := f.t
	t.Helper()
	deadline := time.Now().Add(max)
	for {
		es := w.Events()
		if len(es) > 0 && time.Since(es[len(es)-1].At) >= quiet {
			t.Logf("settled: no %s event for %s (%d events before)", w.Kind(), quiet, len(es))
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s events never stopped for %s in %s: %d events", w.Kind(), quiet, max, len(es))
		}
		time.Sleep(200 * time.Millisecond) // polling a condition, with a deadline
	}
}
