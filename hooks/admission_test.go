package hooks

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/internal/mcrequest"
	"github.com/stackdome/stackdome/portcheck"
)

// startedBody sends prefix, says so on started, then waits for release and
// ends with err (io.EOF: a body cut short; another error: the client gone).
type startedBody struct {
	prefix  []byte
	started chan<- struct{}
	release <-chan struct{}
	err     error
	once    sync.Once
}

func (b *startedBody) Read(p []byte) (int, error) {
	if len(b.prefix) > 0 {
		n := copy(p, b.prefix)
		b.prefix = b.prefix[n:]
		return n, nil
	}
	b.once.Do(func() { b.started <- struct{}{} })
	<-b.release
	return 0, b.err
}

func servingRequest(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "sync", "serving.request.json"))
	require.NoError(t, err)
	return b
}

// TestTricklingBodiesHoldNoSlot: requests whose bodies have not arrived hold
// nothing another request needs: eight of them stalled, a sync is answered
// 200. On main each held one of the four slots for its whole read, and the
// sync was answered 429.
func TestTricklingBodiesHoldNoSlot(t *testing.T) {
	reading, release := make(chan struct{}), make(chan struct{})
	syncWhileHeld(t, 8, func() io.Reader { return &stalledBody{reading: reading, release: release} }, reading, release)
}

// TestOneNamespaceCannotHoldTheDoor: six large syncs of one namespace being
// read (each 256 KiB arrived, the rest on its way) leave room for another
// namespace's sync, answered 200. On main the first four held every slot
// and the other tenant was answered 429.
func TestOneNamespaceCannotHoldTheDoor(t *testing.T) {
	big := appRequest(t, "big", "app", 1000, podShapes["kubelet"])
	started, release := make(chan struct{}), make(chan struct{})
	syncWhileHeld(t, 6, func() io.Reader {
		return &startedBody{prefix: big[:256<<10], started: started, release: release, err: io.ErrUnexpectedEOF}
	}, started, release)
}

// syncWhileHeld sends n syncs whose bodies come from body and block until
// release is closed, waits until each has begun reading (a send on begun)
// or was answered at once, then requires a small sync of another namespace
// to be answered 200 while they hold what they hold.
func syncWhileHeld(t *testing.T, n int, body func() io.Reader, begun <-chan struct{}, release chan struct{}) {
	t.Helper()
	router := Router(&Handler{Verifier: &recorder{}}, nil, nil)
	var wg sync.WaitGroup
	finished := make(chan struct{}, n)
	for range n {
		req := httptest.NewRequest(http.MethodPost, "/sync", body())
		wg.Go(func() { router.ServeHTTP(httptest.NewRecorder(), req); finished <- struct{}{} })
	}
	for range n { // each reading, or refused at once
		select {
		case <-begun:
		case <-finished:
		}
	}
	w := httptest.NewRecorder()
	router.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(servingRequest(t))))
	close(release)
	wg.Wait()
	require.Equal(t, http.StatusOK, w.Code, "%.300s", w.Body.String())
}

// TestNamespacePastItsShareIsTold429: with two namespaces active, one
// holding half the budget is refused its next request at once (429,
// Retry-After), while the other is admitted; when the first holds nothing
// the second's bytes count again as their own share.
func TestNamespacePastItsShareIsTold429(t *testing.T) {
	small := servingRequest(t) // namespace shop
	budget := 8 * bodyCost(int64(len(small)))
	h := &Handler{Verifier: &recorder{}, Memory: budget}
	router := Router(h, nil, nil)
	big := appRequest(t, "big", "app", 300, podShapes["kubelet"])
	// One request of "big" holding just over half the budget.
	holding := int(budget*reserveDenominator/reserveFactorNum/2) + 10<<10
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan int)
	go func() {
		w := httptest.NewRecorder()
		router.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/sync", &startedBody{prefix: big[:holding], started: started, release: release, err: io.ErrUnexpectedEOF}))
		done <- w.Code
	}()
	<-started

	w := httptest.NewRecorder()
	router.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(small)))
	require.Equal(t, http.StatusOK, w.Code, "the other namespace is admitted: %.300s", w.Body.String())

	w = httptest.NewRecorder()
	router.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(big)))
	require.Equal(t, http.StatusTooManyRequests, w.Code, "%.300s", w.Body.String())
	require.Equal(t, "1", w.Header().Get("Retry-After"))
	require.Contains(t, w.Body.String(), `namespace "big" holds`)

	close(release)
	require.Equal(t, http.StatusBadRequest, <-done, "a body cut short")
	used, nss := h.admit.inUse()
	require.Zero(t, used)
	require.Zero(t, nss)
}

// TestAdmissionGivesBackEveryByte: whatever way a request ends, everything it
// reserved is given back: the budget holds nothing after it.
func TestAdmissionGivesBackEveryByte(t *testing.T) {
	serving := servingRequest(t)
	customize, err := os.ReadFile(filepath.Join("..", "testdata", "customize", "serving.request.json"))
	if err != nil {
		customize = []byte(`{"parent":` + string(servingParent(t)) + `}`)
	}
	tests := map[string]struct {
		handler func() *Handler // nil: the defaults
		path    string
		body    io.Reader
		cancel  bool // the client goes away while the body arrives
		panics  bool // the verifier panics: a bug of ours, answered 500
		want    int
	}{
		"answered":                {path: "/sync", body: bytes.NewReader(serving), want: http.StatusOK},
		"customize":               {path: "/customize", body: bytes.NewReader(customize), want: http.StatusOK},
		"malformed":               {path: "/sync", body: bytes.NewReader(serving[:len(serving)/2]), want: http.StatusBadRequest},
		"customize malformed":     {path: "/customize", body: bytes.NewReader([]byte(`{"parent":`)), want: http.StatusBadRequest},
		"over --max-body":         {handler: func() *Handler { return &Handler{MaxBody: 100 << 10} }, path: "/sync", body: io.NopCloser(bytes.NewReader(appRequest(t, "ns", "app", 100, podShapes["kubelet"]))), want: http.StatusRequestEntityTooLarge},
		"over --max-pods":         {handler: func() *Handler { return &Handler{Budget: Budget{PodsPerSync: 10}} }, path: "/sync", body: bytes.NewReader(appRequest(t, "ns", "app", 11, podShapes["kubelet"])), want: http.StatusRequestEntityTooLarge},
		"over the whole budget":   {handler: func() *Handler { return &Handler{Memory: 64 << 10} }, path: "/sync", body: bytes.NewReader(appRequest(t, "ns", "app", 100, podShapes["kubelet"])), want: http.StatusRequestEntityTooLarge},
		"objects over the budget": {handler: func() *Handler { return &Handler{Memory: bodyCost(int64(len(serving))) + 2*PerObject} }, path: "/sync", body: bytes.NewReader(serving), want: http.StatusRequestEntityTooLarge},
		"client gone":             {path: "/sync", body: &startedBody{prefix: serving[:len(serving)/2], release: closed(), err: errors.New("connection reset")}, want: http.StatusBadRequest},
		"client gone, context":    {path: "/sync", body: bytes.NewReader(serving), cancel: true, want: http.StatusServiceUnavailable},
		"a panic of ours":         {path: "/sync", body: bytes.NewReader(serving), panics: true, want: http.StatusInternalServerError},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := &Handler{}
			if tc.handler != nil {
				h = tc.handler()
			}
			h.Verifier = &recorder{}
			if tc.panics {
				h.Verifier = &panicking{}
			}
			router := Router(h, nil, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			if b, ok := tc.body.(*startedBody); ok {
				b.started = make(chan struct{}, 1)
			}
			w := httptest.NewRecorder()
			router.ServeHTTP(w, httptest.NewRequestWithContext(ctx, http.MethodPost, tc.path, tc.body))
			require.Equal(t, tc.want, w.Code, "%.300s", w.Body.String())
			used, nss := h.admit.inUse()
			require.Zero(t, used, "bytes still held")
			require.Zero(t, nss, "namespaces still holding")
		})
	}
}

// panicking is a verifier whose every read panics.
type panicking struct{ recorder }

func (*panicking) Get(portcheck.Key) (portcheck.Result, bool) { panic("a bug") }

func closed() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// TestWaitWithinShare: a reservation within its namespace's share that
// finds the budget full waits for the namespaces past their share, and is
// admitted when they give back; it is refused after AdmitWait if they do
// not, and gives up when its client goes; none holds anything after.
func TestWaitWithinShare(t *testing.T) {
	for name, end := range map[string]string{"admitted": "release", "refused": "timeout", "client gone": "cancel"} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				a := newAdmission(1000, time.Now)
				big := &ticket{a: a}
				require.NoError(t, big.identify(context.Background(), "big"))
				require.NoError(t, big.reserve(context.Background(), 900))
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				small := &ticket{a: a}
				require.NoError(t, small.identify(ctx, "small"), "identifying takes nothing owed")
				errc := make(chan error)
				go func() { errc <- small.reserve(ctx, 200) }()
				synctest.Wait()
				start := time.Now()
				switch end {
				case "release":
					big.done()
					require.NoError(t, <-errc)
					require.Zero(t, time.Since(start))
					used, _ := a.inUse()
					require.Equal(t, int64(200), used)
				case "timeout":
					err := <-errc
					require.ErrorIs(t, err, errOverShare)
					require.Equal(t, AdmitWait, time.Since(start))
				case "cancel":
					cancel()
					require.ErrorIs(t, <-errc, context.Canceled)
				}
				small.done()
				big.done()
				used, nss := a.inUse()
				require.Zero(t, used)
				require.Zero(t, nss)
			})
		})
	}
}

// TestShareFollowsActiveNamespaces: alone, a namespace may use the whole
// budget; with another active, its share is half, past which a second
// request of it is refused at once (its one request may go on); FairWindow
// after the other was last seen, the whole again.
func TestShareFollowsActiveNamespaces(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAdmission(1000, time.Now)
		ctx := context.Background()
		one := &ticket{a: a}
		require.NoError(t, one.identify(ctx, "one"))
		require.NoError(t, one.reserve(ctx, 900), "alone: the whole budget")
		one.done()

		other := &ticket{a: a}
		require.NoError(t, other.identify(ctx, "other"))
		require.NoError(t, other.reserve(ctx, 10))
		other.done()

		one = &ticket{a: a}
		require.NoError(t, one.identify(ctx, "one"))
		require.NoError(t, one.reserve(ctx, 500))
		second := &ticket{a: a}
		require.NoError(t, second.identify(ctx, "one"))
		err := second.reserve(ctx, 1)
		require.ErrorIs(t, err, errOverShare, "past half with another active")
		require.ErrorContains(t, err, `namespace "one" holds 500 of its share of 500 bytes among 2 namespaces`)
		require.NoError(t, one.reserve(ctx, 100), "its one request may pass the share")

		time.Sleep(FairWindow + time.Second)
		require.NoError(t, second.reserve(ctx, 300), "the other gone quiet: the whole budget again")
		one.done()
		second.done()

		var tooLarge *tooLargeError
		require.ErrorAs(t, (&ticket{a: a}).reserve(ctx, 1001), &tooLarge)
		used, nss := a.inUse()
		require.Zero(t, used)
		require.Zero(t, nss)
	})
}

var _ = mcrequest.Raw
