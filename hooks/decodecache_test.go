package hooks

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/portcheck"
)

// dropDials is a verifier that knows nothing and drops the dials it is
// given; safe for concurrent use.
type dropDials struct{ noVerdicts }

func (dropDials) Enqueue(portcheck.Job) bool { return true }
func (dropDials) Forget(portcheck.Key)       {}

// TestDecodedObjectsAreShared: the handler's observed.Cache hands the same
// decoded children, related objects and parents to every sync whose bytes
// match, concurrently. Four clients send every golden request three times
// each, in different orders, through one handler: every answer is the
// golden one, whether its objects were decoded or taken from the Cache, and
// under -race (make test) any stage writing to a shared decoded value is
// reported.
func TestDecodedObjectsAreShared(t *testing.T) {
	stems := fixtures(t)
	bodies := make([][]byte, len(stems))
	wants := make([][]byte, len(stems))
	for i, stem := range stems {
		var err error
		bodies[i], err = os.ReadFile(stem + ".request.json")
		require.NoError(t, err)
		wants[i], err = os.ReadFile(stem + ".response.json")
		require.NoError(t, err)
	}
	router, _ := newTestRouter(t, dropDials{})
	var wg sync.WaitGroup
	for c := range 4 {
		wg.Go(func() {
			for round := range 3 {
				for k := range stems {
					i := (k*(c+1) + round) % len(stems)
					w := httptest.NewRecorder()
					router.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(bodies[i])))
					if !assertGolden(t, w, wants[i]) {
						t.Errorf("client %d round %d: %s", c, round, filepath.Base(stems[i]))
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// assertGolden reports whether w answered 200 with want's JSON.
func assertGolden(t *testing.T, w *httptest.ResponseRecorder, want []byte) bool {
	if w.Code != http.StatusOK {
		t.Errorf("%d %s", w.Code, w.Body.String())
		return false
	}
	return jsonEq(t, want, w.Body.Bytes())
}

// jsonEq reports whether want and got hold the same JSON, and says how
// they differ when not.
func jsonEq(t *testing.T, want, got []byte) bool {
	var w, g any
	if err := json.Unmarshal(want, &w); err != nil {
		t.Errorf("want: %v", err)
		return false
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("got: %v", err)
		return false
	}
	if d := cmp.Diff(w, g); d != "" {
		t.Errorf("answer (-want +got):\n%s", d)
		return false
	}
	return true
}
