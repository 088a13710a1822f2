package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/hooks"
)

// chartMemoryLimit is the chart's default memory limit (values.yaml
// resources.limits.memory), which the chart also gives the process as
// GOMEMLIMIT.
const chartMemoryLimit = 256 << 20

// peakRSS is the process's peak resident set (VmHWM), in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// podsRequest is a sync request of the serving fixture's parent and pods
// related pods, each padded with an annotation of pad bytes (annotations are
// decoded, so this is the dearest pod per byte short of the budget).
func podsRequest(t testing.TB, pods, pad int) []byte {
	body, err := os.ReadFile("testdata/sync/serving.request.json")
	require.NoError(t, err)
	var req struct {
		Parent json.RawMessage `json:"parent"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	var b bytes.Buffer
	b.WriteString(`{"parent":`)
	b.Write(req.Parent)
	b.WriteString(`,"related":{"Pod.v1":{`)
	filler := strings.Repeat("x", pad)
	for i := range pods {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%07d":{"metadata":{"name":"p%07d","annotations":{"a":"%s"}}}`, i, i, filler)
	}
	b.WriteString(`}}}`)
	return b.Bytes()
}

// TestHostileSyncsLeaveRSSUnderTheChartLimit runs `stackdome serve` as the
// chart does (GOMAXPROCS=1, GOMEMLIMIT at the 256Mi limit, default flags)
// and sends it, one after another, what took main past the limit (issue 25):
// eight connections each declaring 32 MiB and the largest body the limit
// takes, sending nothing; a 32 MB and a 9 MB request of minimal pods; an
// invalid spec whose child carries a 32 MB last-applied annotation; then the
// dearest load it accepts, four requests at once, each at the pod
// budget and near the body limit. The peak RSS stays under the chart's
// limit, and the error pages answer throughout.
func TestHostileSyncsLeaveRSSUnderTheChartLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("sends a few hundred MB over loopback")
	}
	bin := buildBinary(t)
	serving, pid := startServe(t, bin)
	hooksAddr, pagesAddr := serving["hooks"].(string), serving["errorPages"].(string)
	client := &http.Client{Timeout: hangDeadline}
	pageAnswers := func(t *testing.T) {
		t.Helper()
		resp, err := client.Get("http://" + pagesAddr + "/_errors/503")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	}
	post := func(body []byte) (int, string) {
		resp, err := client.Post("http://"+hooksAddr+"/sync", "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	start := peakRSS(t, pid)

	// Eight stalled connections: the handler reading those with a slot.
	var stalled []net.Conn
	for i := range 8 {
		declared := int64(32 << 20)
		if i%2 == 1 {
			declared = hooks.MaxBody
		}
		c, err := net.Dial("tcp", hooksAddr)
		require.NoError(t, err)
		stalled = append(stalled, c)
		fmt.Fprintf(c, "POST /sync HTTP/1.1\r\nHost: stackdome\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", declared)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		// 100: a handler is reading; 413: refused from the header; 429:
		// no slot.
		require.Contains(t, []int{http.StatusContinue, http.StatusRequestEntityTooLarge, http.StatusTooManyRequests}, resp.StatusCode)
	}
	pageAnswers(t)
	afterStalled := peakRSS(t, pid)
	for _, c := range stalled {
		c.Close()
	}

	for name, body := range map[string][]byte{
		"32 MB of minimal pods": podsRequest(t, 475_000, 0),
		"9 MB of minimal pods":  podsRequest(t, 134_000, 0),
		"32 MB last-applied":    bigLastAppliedRequest(32 << 20),
		"12 MB last-applied":    bigLastAppliedRequest(12 << 20),
	} {
		code, reason := post(body)
		require.Equal(t, http.StatusRequestEntityTooLarge, code, "%s: %.200s", name, reason)
		pageAnswers(t)
		t.Logf("%s (%d bytes): %d %.120s", name, len(body), code, reason)
	}
	afterRefused := peakRSS(t, pid)

	// Four requests at once, each of
	// PodsPerSync pods padded to just under the body limit.
	pad := int(hooks.MaxBody)/hooks.DefaultBudget.PodsPerSync - 100
	big := podsRequest(t, hooks.DefaultBudget.PodsPerSync, pad)
	require.Less(t, int64(len(big)), int64(hooks.MaxBody))
	var wg sync.WaitGroup
	const atOnce = 4 // the load that peaked at 201.7 MiB before admission by bytes
	codes := make([]int, atOnce)
	for i := range atOnce {
		wg.Go(func() { codes[i], _ = post(big) })
	}
	pageAnswers(t)
	wg.Wait()
	pageAnswers(t)
	peak := peakRSS(t, pid)

	t.Logf("peak RSS: %.1f MiB at start, %.1f MiB after the stalled connections, %.1f MiB after the refused requests, %.1f MiB after %d accepted %.1f MiB syncs at once (codes %v); chart limit %d MiB",
		mib(start), mib(afterStalled), mib(afterRefused), mib(peak), atOnce, mib(int64(len(big))), codes, chartMemoryLimit>>20)
	require.Less(t, peak, int64(chartMemoryLimit), "peak RSS past the chart's memory limit")
	for _, c := range codes {
		require.Contains(t, []int{http.StatusOK, http.StatusTooManyRequests}, c)
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// bigLastAppliedRequest is an invalid spec whose Deployment child carries a
// last-applied annotation of size bytes.
func bigLastAppliedRequest(size int) []byte {
	la := fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"t","annotations":{"filler":%q}}}`, strings.Repeat("x", size))
	child, _ := json.Marshal(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "t", "annotations": map[string]string{"metacontroller.k8s.io/last-applied-configuration": la}}})
	return []byte(`{"parent":{"kind":"StackResource","metadata":{"name":"t","namespace":"n"},"spec":{"type":"Service"}},` +
		`"children":{"Deployment.apps/v1":{"t":` + string(child) + `}}}`)
}
