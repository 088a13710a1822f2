package syncbench

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stackdome/stackdome/hooks"
	"github.com/stackdome/stackdome/internal/mcrequest"
)

// The load of BenchmarkTenantFairness: heavyClients clients loop syncs of
// one app of heavyPods pods (kubelet-reported, with managedFields: 11 MB)
// in namespace heavy, back to back, as fast as they are answered or
// refused.
const (
	heavyClients = 8
	heavyPods    = 2000
)

// BenchmarkTenantFairness: against heavyClients clients looping large but
// legal syncs in one namespace, a small tenant in another (the serving
// fixture, namespace shop) syncs one parent after another, and on a 429
// waits Retry-After before it tries again, as Metacontroller v4.17.2 does
// (pkg/hooks/webhook.go reads Retry-After into TooManyRequestError;
// pkg/controller/composite/controller.go processNextWorkItem requeues the
// parent with queue.AddAfter(key, AfterSecond), no rate limiting, no
// event). One op is one of its syncs, from its first attempt to a 200.
// The binary runs in the chart's environment (chartEnv); SYNCBENCH_BINARY
// names another build to measure (main's). It reports free-of-429 (the
// share of its syncs answered 200 at the first attempt), attempts/sync,
// max-wait-ms (the longest from a first attempt to its 200) and
// heavy-ok/s. The goal: free-of-429 ≥ 0.9, max-wait-ms < RetryAfter.
// Bound it with -benchtime (e.g. 40x). In heavy=hostile the heavy clients
// send again at once after a 429; in heavy=metacontroller they wait
// Retry-After first, as the small tenant does.
func BenchmarkTenantFairness(b *testing.B) {
	for _, honour := range []bool{false, true} {
		name := "heavy=hostile"
		if honour {
			name = "heavy=metacontroller"
		}
		b.Run(name, func(b *testing.B) { tenantFairness(b, honour) })
	}
}

func tenantFairness(b *testing.B, heavyWaits bool) {
	bin := os.Getenv("SYNCBENCH_BINARY")
	if bin == "" {
		bin = filepath.Join(b.TempDir(), "stackdome")
		build := exec.Command("go", "build", "-o", bin, "github.com/stackdome/stackdome")
		build.Stderr = os.Stderr
		if err := build.Run(); err != nil {
			b.Fatalf("building stackdome: %v", err)
		}
	}
	heavy := appBody(b, "heavy", heavyPods, mcrequest.PodShape{Ports: []int32{8080, 9090}, ManagedFields: true})
	small, err := os.ReadFile(fixture)
	if err != nil {
		b.Fatal(err)
	}
	proc, hooksAddr, _ := startBinaryEnv(b, chartEnv(b), bin, "--dial-allow", "127.0.0.0/8")
	defer func() { proc.Signal(syscall.SIGTERM); proc.Wait() }()
	url := "http://" + hooksAddr + "/sync"
	client := &http.Client{Timeout: 30 * time.Second}
	send := func(body []byte) (int, time.Duration, error) {
		resp, err := client.Post(url, "application/json", bytes.NewReader(body))
		if err != nil {
			return 0, 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		after, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return resp.StatusCode, time.Duration(after) * time.Second, nil
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	heavyOK := 0
	for range heavyClients {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				code, after, err := send(heavy)
				if err != nil {
					b.Error(err)
					return
				}
				if code == http.StatusOK {
					mu.Lock()
					heavyOK++
					mu.Unlock()
				}
				if code == http.StatusTooManyRequests && heavyWaits {
					select {
					case <-stop:
						return
					case <-time.After(after):
					}
				}
			}
		})
	}
	time.Sleep(2 * time.Second) // the heavy tenant holds what it can

	syncs, free, attempts := 0, 0, 0
	var maxWait time.Duration
	start := time.Now()
	for b.Loop() {
		first := time.Now()
		for try := 0; ; try++ {
			code, after, err := send(small)
			if err != nil {
				b.Fatal(err)
			}
			attempts++
			if code == http.StatusOK {
				if try == 0 {
					free++
				}
				break
			}
			if code != http.StatusTooManyRequests {
				b.Fatalf("small tenant answered %d", code)
			}
			time.Sleep(after)
		}
		maxWait = max(maxWait, time.Since(first))
		syncs++
	}
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(free)/float64(syncs), "free-of-429")
	b.ReportMetric(float64(attempts)/float64(syncs), "attempts/sync")
	b.ReportMetric(float64(maxWait.Microseconds())/1000, "max-wait-ms")
	b.ReportMetric(float64(heavyOK)/elapsed.Seconds(), "heavy-ok/s")
}

// appBody is a sync request of the fixture's parent, renamed app in
// namespace ns, with pods running pods of shape (mcrequest.RunningPod).
func appBody(tb testing.TB, ns string, pods int, shape mcrequest.PodShape) []byte {
	raw, err := os.ReadFile(fixture)
	if err != nil {
		tb.Fatal(err)
	}
	var req struct {
		Parent mcrequest.Object `json:"parent"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		tb.Fatal(err)
	}
	p := req.Parent
	mcrequest.Meta(p)["namespace"], mcrequest.Meta(p)["name"] = ns, "app"
	delete(p, "status")
	cust, err := hooks.DefaultConfig().Customize(mcrequest.Customize(p))
	if err != nil {
		tb.Fatal(err)
	}
	return mcrequest.Raw(mcrequest.AppSync(p, cust.RelatedResources, "75qkjkcv", pods, shape).Request())
}
