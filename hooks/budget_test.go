package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/portcheck"
)

// allocated is the heap allocated so far by the process, in bytes.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// servingParent is the parent of the serving fixture, as raw JSON.
func servingParent(tb testing.TB) json.RawMessage {
	tb.Helper()
	body, err := os.ReadFile(filepath.Join("..", "testdata", "sync", "serving.request.json"))
	require.NoError(tb, err)
	var req struct {
		Parent json.RawMessage `json:"parent"`
	}
	require.NoError(tb, json.Unmarshal(body, &req))
	return req.Parent
}

// minimalPods is a sync request of size bytes or a little more: the serving
// parent and as many minimal related pods as fit, each no more than a
// name, the cheapest pod to send and the dearest to decode per byte.
func minimalPods(tb testing.TB, size int) []byte {
	var b bytes.Buffer
	b.Grow(size + 1024)
	b.WriteString(`{"parent":`)
	b.Write(servingParent(tb))
	b.WriteString(`,"related":{"Pod.v1":{`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%07d":{"metadata":{"name":"p%07d"}}`, i, i)
	}
	b.WriteString(`}}}`)
	return b.Bytes()
}

// bigLastApplied is an invalid spec whose Deployment child carries a
// last-applied annotation of size bytes: the shape that, kept running,
// decoded into 1.46 GiB and was echoed back whole.
func bigLastApplied(size int) []byte {
	filler := strings.Repeat("x", size)
	la := fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"t","annotations":{"filler":%q}}}`, filler)
	child, _ := json.Marshal(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "t", "annotations": map[string]string{"metacontroller.k8s.io/last-applied-configuration": la}}})
	return []byte(`{"parent":{"kind":"StackResource","metadata":{"name":"t","namespace":"n"},"spec":{"type":"Service"}},` +
		`"children":{"Deployment.apps/v1":{"t":` + string(child) + `}}}`)
}

// TestBudgetsRefuseWhatDecodingWouldAmplify: requests under the body limit
// that decode into far more memory are refused 413 naming the budget, with
// a bounded answer, having allocated no more than a small multiple of the
// body. On main the 9 MB request of minimal pods allocated 549 MiB and was
// answered 200, the 32 MB annotation 1.46 GiB and echoed back.
func TestBudgetsRefuseWhatDecodingWouldAmplify(t *testing.T) {
	tests := map[string]struct {
		body    []byte
		maxBody int64
		reason  string
	}{
		"9 MB of minimal pods":            {body: minimalPods(t, 9_000_000), reason: "pods per sync"},
		"32 MB of minimal pods":           {body: minimalPods(t, 32_000_000), maxBody: 64 << 20, reason: "pods per sync"},
		"a 32 MB last-applied annotation": {body: bigLastApplied(32 << 20), maxBody: 64 << 20, reason: "bytes per object"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			rec := &recorder{}
			router := Router(&Handler{Verifier: rec, MaxBody: tc.maxBody}, nil, nil)
			runtime.GC()
			before := allocated()
			w := httptest.NewRecorder()
			router.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(tc.body)))
			spent := allocated() - before

			require.Equal(t, http.StatusRequestEntityTooLarge, w.Code, "%.200s", w.Body.String())
			require.Contains(t, w.Body.String(), tc.reason)
			require.Less(t, w.Body.Len(), maxReason+2, "the answer is one clipped line")
			require.Empty(t, rec.enqueued)
			// The body read, and nothing decoded: a buffer doubling from 512
			// bytes allocates less than twice its final size, at most twice
			// the body.
			if raceDetector {
				t.Logf("-race: the allocation bound is checked by make test's run without it (allocated %d bytes)", spent)
				return
			}
			require.Less(t, spent, uint64(4*len(tc.body)+1<<20), "allocated %d bytes for a %d-byte request", spent, len(tc.body))
			t.Logf("%d-byte request: allocated %.2f bytes per request byte", len(tc.body), float64(spent)/float64(len(tc.body)))
		})
	}
}

// TestBudgetCheck: each budget refuses the first object or group past it; a
// body within budget passes, and one that is not a sync request as
// Metacontroller sends one is refused, but not as over budget.
func TestBudgetCheck(t *testing.T) {
	small := Budget{ObjectsPerGroup: 2, BytesPerObject: 64, PodsPerSync: 3}
	pods := func(n int) string {
		var s []string
		for i := range n {
			s = append(s, fmt.Sprintf(`"p%d":{}`, i))
		}
		return strings.Join(s, ",")
	}
	tests := map[string]struct {
		body string
		want string // "" is within budget; "refused" is refused, not over budget
	}{
		"within":                 {body: `{"parent":{},"children":{"Service.v1":{"a":{},"b":{}}},"related":{"Pod.v1":{` + pods(3) + `}}}`},
		"not JSON":               {body: `{"parent":`, want: "refused"},
		"not an object":          {body: `[1,2]`, want: "refused"},
		"null groups":            {body: `{"children":null,"related":{"Pod.v1":null}}`},
		"objects per group":      {body: `{"children":{"Service.v1":{"a":{},"b":{},"c":{}}}}`, want: "request over budget: children Service.v1 holds 3 objects per group, over the budget of 2"},
		"a group given twice":    {body: `{"children":{"Service.v1":{"a":{},"b":{}},"Service.v1":{"c":{}}}}`, want: "refused"},
		"pods per sync":          {body: `{"related":{"Pod.v1":{` + pods(4) + `}}}`, want: "request over budget: related Pod.v1 holds 4 pods per sync, over the budget of 3"},
		"pods in two sections":   {body: `{"related":{"Pod.v1":{` + pods(2) + `}},"Related":{"Pod.v1":{` + pods(2) + `}}}`, want: "refused"},
		"bytes per object":       {body: `{"children":{"Service.v1":{"a":{"x":"` + strings.Repeat("y", 64) + `"}}}}`, want: `request over budget: children Service.v1 "a" holds 72 bytes per object, over the budget of 64`},
		"the parent is not held": {body: `{"parent":{"x":"` + strings.Repeat("y", 64) + `"}}`},
		"escaped top-level name": {body: `{"childr\u0065n":{"Service.v1":{"a":{},"b":{},"c":{}}}}`, want: "holds 3 objects per group"},
		"braces inside strings":  {body: `{"children":{"Service.v1":{"a":{"x":"}}}{\"}"},"b":{}}}}`},
		"a long name is clipped": {body: `{"children":{"Service.v1":{"` + strings.Repeat("n", 100) + `":"` + strings.Repeat("y", 64) + `"}}}`, want: `"` + strings.Repeat("n", 61) + `..." holds`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := small.Check([]byte(tc.body))
			var over *BudgetError
			switch tc.want {
			case "":
				require.NoError(t, err)
			case "refused":
				require.Error(t, err)
				require.False(t, errors.As(err, &over), "%v is a refusal of the body, not of its size", err)
			default:
				require.ErrorContains(t, err, tc.want)
				require.True(t, errors.As(err, &over), "%v", err)
			}
		})
	}
}

// cancelling is a Scheduler whose verdicts, once read, cancel the request:
// the client gives up while status is being decided.
type cancelling struct {
	recorder
	cancel context.CancelFunc
}

func (c *cancelling) Get(k portcheck.Key) (portcheck.Result, bool) {
	c.cancel()
	return portcheck.Result{}, false
}

// TestAbandonedSyncStopsBetweenStages: a request whose client has gone stops
// at the next stage of the pipeline, scheduling nothing, whether it went
// while the body arrived or while status was decided. On main it ran to the
// end and scheduled its dials.
func TestAbandonedSyncStopsBetweenStages(t *testing.T) {
	serving, err := os.ReadFile(filepath.Join("..", "testdata", "sync", "serving.request.json"))
	require.NoError(t, err)

	t.Run("while status was decided", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := &cancelling{cancel: cancel}
		router := Router(&Handler{Verifier: s}, nil, nil)
		w := httptest.NewRecorder()
		router.ServeHTTP(w, httptest.NewRequestWithContext(ctx, http.MethodPost, "/sync", bytes.NewReader(serving)))
		require.Equal(t, http.StatusServiceUnavailable, w.Code, "%.200s", w.Body.String())
		require.Contains(t, w.Body.String(), "request abandoned: context canceled")
		require.Empty(t, s.enqueued, "nothing scheduled")
	})
	t.Run("before the pipeline", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		rec := &recorder{}
		router := Router(&Handler{Verifier: rec}, nil, nil)
		w := httptest.NewRecorder()
		router.ServeHTTP(w, httptest.NewRequestWithContext(ctx, http.MethodPost, "/sync", bytes.NewReader(serving)))
		require.Equal(t, http.StatusServiceUnavailable, w.Code, "%.200s", w.Body.String())
		require.Empty(t, rec.enqueued)
	})
}
