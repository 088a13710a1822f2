package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/internal/mcrequest"
)

// podShapes are the related pods admission is sized for: as the kubelet
// reports them, without and with managedFields.
var podShapes = map[string]mcrequest.PodShape{
	"kubelet":               {Ports: []int32{8080, 9090}},
	"kubelet+managedFields": {Ports: []int32{8080, 9090}, ManagedFields: true},
}

// appRequest is a sync request of the serving fixture's parent, renamed to
// app in namespace ns, with pods running pods of shape: what Metacontroller
// sends for a large app.
func appRequest(tb testing.TB, ns, app string, pods int, shape mcrequest.PodShape) []byte {
	tb.Helper()
	body, err := os.ReadFile(filepath.Join("..", "testdata", "sync", "serving.request.json"))
	require.NoError(tb, err)
	var req struct {
		Parent mcrequest.Object `json:"parent"`
	}
	require.NoError(tb, json.Unmarshal(body, &req))
	p := req.Parent
	mcrequest.Meta(p)["namespace"], mcrequest.Meta(p)["name"] = ns, app
	delete(p, "status")
	cust, err := DefaultConfig().Customize(mcrequest.Customize(p))
	require.NoError(tb, err)
	return mcrequest.Raw(mcrequest.AppSync(p, cust.RelatedResources, "75qkjkcv", pods, shape).Request())
}

// minimalPodsRequest is a sync request of the serving parent and pods
// related pods each no more than a name and an annotation of pad bytes:
// the cheapest pods to send, the dearest to decode per byte.
func minimalPodsRequest(tb testing.TB, pods, pad int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"parent":`)
	b.Write(servingParent(tb))
	b.WriteString(`,"related":{"Pod.v1":{`)
	filler := strings.Repeat("x", pad)
	for i := range pods {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%07d":{"metadata":{"name":"p%07d","annotations":{"a":%q}}}`, i, i, filler)
	}
	b.WriteString(`}}}`)
	return b.Bytes()
}

// estimateShapes are the requests admission's estimate is measured on.
func estimateShapes(tb testing.TB, pods int) map[string][]byte {
	return map[string][]byte{
		"kubelet":               appRequest(tb, "ns", "app", pods, podShapes["kubelet"]),
		"kubelet+managedFields": appRequest(tb, "ns", "app", pods, podShapes["kubelet+managedFields"]),
		"minimal":               minimalPodsRequest(tb, pods, 0),
		"minimal+1.5KB":         minimalPodsRequest(tb, pods, 1500),
	}
}

// syncAllocates is what one sync of body allocates on a new handler (no
// cache), the collector off: the most it can hold at once.
func syncAllocates(tb testing.TB, body []byte) uint64 {
	router := Router(&Handler{Verifier: &recorder{}, MaxBody: 64 << 20}, nil, nil)
	runtime.GC()
	old := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(old)
	before := allocated()
	w := httptest.NewRecorder()
	router.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(body)))
	spent := allocated() - before
	require.Equal(tb, http.StatusOK, w.Code, "%.300s", w.Body.String())
	return spent
}

// estimateOf is what admission reserves for body.
func estimateOf(tb testing.TB, body []byte) int64 {
	objects, err := DefaultBudget.Measure(body)
	require.NoError(tb, err)
	return bodyCost(int64(len(body))) + int64(objects)*PerObject
}

// TestEstimateCoversDecoding: for every pod shape, what admission reserves
// for a sync is at least what the sync allocates (a bound of what it holds
// at once), so a budget of estimates bounds the memory.
func TestEstimateCoversDecoding(t *testing.T) {
	if raceDetector {
		t.Skip("-race allocates for its own bookkeeping")
	}
	for name, body := range estimateShapes(t, 500) {
		t.Run(name, func(t *testing.T) {
			spent, est := syncAllocates(t, body), estimateOf(t, body)
			t.Logf("%d bytes: allocated %.2f bytes a body byte, estimate %.2f (%.2f of the allocation)", len(body), float64(spent)/float64(len(body)), float64(est)/float64(len(body)), float64(est)/float64(spent))
			require.GreaterOrEqual(t, est, int64(spent), "the estimate is under what the sync allocated")
		})
	}
}

// BenchmarkAdmissionEstimate: for each pod shape at 1,000 pods, the bytes
// a sync allocates (collector off) per body byte and per pod, the body's
// bytes per pod, and admission's estimate over the allocation (≥ 1).
// docs/performance.md, "Admission by bytes", states them.
func BenchmarkAdmissionEstimate(b *testing.B) {
	for name, body := range estimateShapes(b, 1000) {
		b.Run(name, func(b *testing.B) {
			var spent uint64
			n := 0
			for b.Loop() {
				spent += syncAllocates(b, body)
				n++
			}
			per := float64(spent) / float64(n)
			pods := 1000.0
			b.ReportMetric(per/float64(len(body)), "alloc-B/req-B")
			b.ReportMetric(per/pods, "alloc-B/pod")
			b.ReportMetric(float64(len(body))/pods, "req-B/pod")
			b.ReportMetric(float64(estimateOf(b, body))/per, "estimate/alloc")
		})
	}
}
