package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/hooks"
	"github.com/stackdome/stackdome/internal/mcrequest"
)

// rssMargin is the share of the chart's memory limit the admitted loads
// must leave free: the collector's headroom and what the caches of a busy
// replica add (docs/performance.md, "Admission").
const rssMargin = 0.10

// appSync is a sync request of the serving fixture's parent, named app in
// namespace ns, with pods running pods of shape (mcrequest.RunningPod).
func appSync(t testing.TB, ns string, pods int, shape mcrequest.PodShape) []byte {
	t.Helper()
	body, err := os.ReadFile("testdata/sync/serving.request.json")
	require.NoError(t, err)
	var req struct {
		Parent mcrequest.Object `json:"parent"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	p := req.Parent
	mcrequest.Meta(p)["namespace"], mcrequest.Meta(p)["name"] = ns, "app"
	delete(p, "status")
	cust, err := hooks.DefaultConfig().Customize(mcrequest.Customize(p))
	require.NoError(t, err)
	return mcrequest.Raw(mcrequest.AppSync(p, cust.RelatedResources, "75qkjkcv", pods, shape).Request())
}

// TestAdmittedLoadsLeaveRSSUnderTheChartLimit runs `stackdome serve` as the
// chart does (GOMAXPROCS=1, GOMEMLIMIT at the 256Mi limit, default flags)
// and sends it, shape after shape, eight syncs at once, three rounds, of
// about 15.6 MiB each: pods as the kubelet reports them (the shape that
// took main to 270 MiB four at a time), the same with managedFields, and
// minimal pods at the pod budget carrying a 1.5 KB annotation each. The
// admission takes what its budget holds and answers the rest 429; the
// peak RSS stays under the chart's limit by rssMargin, and every sync of a
// second, small tenant sent meanwhile is answered.
func TestAdmittedLoadsLeaveRSSUnderTheChartLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("sends a few hundred MB over loopback")
	}
	bin := buildBinary(t)
	serving, pid := startServe(t, bin)
	url := "http://" + serving["hooks"].(string) + "/sync"
	client := &http.Client{Timeout: hangDeadline}
	post := func(body []byte) int {
		resp, err := client.Post(url, "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		if resp.StatusCode != http.StatusOK && len(body) < 1<<20 {
			t.Logf("small tenant: %d %.200s", resp.StatusCode, b.String())
		}
		return resp.StatusCode
	}
	small, err := os.ReadFile("testdata/sync/serving.request.json")
	require.NoError(t, err)
	start := peakRSS(t, pid)

	shapes := []struct {
		name string
		body []byte
	}{
		{"kubelet pods", appSync(t, "tenant", 5100, mcrequest.PodShape{Ports: []int32{8080, 9090}})},
		{"kubelet pods with managedFields", appSync(t, "tenant", 2950, mcrequest.PodShape{Ports: []int32{8080, 9090}, ManagedFields: true})},
		{"minimal pods at the pod budget", bytes.Replace(podsRequest(t, hooks.DefaultBudget.PodsPerSync, int(hooks.MaxBody)/hooks.DefaultBudget.PodsPerSync-100),
			[]byte(`"namespace": "shop"`), []byte(`"namespace": "tenant"`), 1)},
	}
	for _, s := range shapes {
		require.Less(t, int64(len(s.body)), int64(hooks.MaxBody), s.name)
		codes := map[int]int{}
		var mu sync.Mutex
		smallCodes := map[int]int{}
		for range 3 {
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					c := post(s.body)
					mu.Lock()
					codes[c]++
					mu.Unlock()
				})
			}
			wg.Go(func() {
				for range 5 {
					smallCodes[post(small)]++
				}
			})
			wg.Wait()
		}
		peak := peakRSS(t, pid)
		t.Logf("%s (%.1f MiB): codes %v, small tenant %v; peak RSS %.1f MiB", s.name, mib(int64(len(s.body))), codes, smallCodes, mib(peak))
		require.Positive(t, codes[http.StatusOK], "%s: some admitted", s.name)
		require.Equal(t, codes[http.StatusOK]+codes[http.StatusTooManyRequests], 24, "%s: 200 or 429 only: %v", s.name, codes)
		require.Equal(t, 15, smallCodes[http.StatusOK], "%s: the small tenant is answered: %v", s.name, smallCodes)
	}
	peak := peakRSS(t, pid)
	t.Logf("peak RSS %.1f MiB (%.1f MiB at start), limit %d MiB, margin %.0f%%", mib(peak), mib(start), chartMemoryLimit>>20, 100*(1-float64(peak)/chartMemoryLimit))
	bound := float64(chartMemoryLimit) * (1 - rssMargin)
	require.Less(t, float64(peak), bound, "peak RSS within %.0f%% of the chart's memory limit", 100*rssMargin)
}
