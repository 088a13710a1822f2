package hooks

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// stalledBody is a request body that has sent nothing yet: its first Read
// says so on reading, then waits until release is closed and ends the body.
type stalledBody struct {
	reading chan<- struct{}
	release <-chan struct{}
	once    sync.Once
}

func (b *stalledBody) Read([]byte) (int, error) {
	b.once.Do(func() { b.reading <- struct{}{} })
	<-b.release
	return 0, io.EOF
}

// liveHeap is the heap the last garbage collection found live, after one.
func liveHeap() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestDeclaredLengthCostsNothing: eight requests each declaring a 32 MiB body
// (the limit) and sending nothing hold no memory for what they declared.
// Sized from Content-Length, they held 256 MiB, past the chart's memory
// limit, for the whole read timeout (issue 25, item 1).
func TestDeclaredLengthCostsNothing(t *testing.T) {
	const conns = 8
	router := Router(&Handler{Verifier: &recorder{}}, nil, nil)
	before := liveHeap()

	reading, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	codes := make([]int, conns)
	for i := range conns {
		req := httptest.NewRequest(http.MethodPost, "/sync", &stalledBody{reading: reading, release: release})
		req.ContentLength = MaxBody
		wg.Go(func() {
			w := httptest.NewRecorder()
			router.ServeHTTP(w, req)
			codes[i] = w.Code
		})
	}
	for range conns {
		<-reading
	}
	grown := int64(liveHeap()) - int64(before)
	close(release)
	wg.Wait()

	// A few KiB of buffers and request state per connection; 1 MiB in all
	// is far below the 8 × 32 MiB declared.
	require.Less(t, grown, int64(1<<20), "live heap grew by %d bytes while %d requests declared %d bytes each", grown, conns, MaxBody)
	for _, c := range codes {
		require.Equal(t, http.StatusBadRequest, c, "an empty body is not a sync request")
	}
}
