package monitoring

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// catalog is what queries may select: metric name → label name → the label's
// values when they form a closed set (nil: any value).
type catalog map[string]map[string]map[string]bool

// targetLabels are the labels a Prometheus Operator scrape adds to every
// series of a ServiceMonitor target. kube-state-metrics' own namespace label
// wins over the target's (honorLabels), which docs/operations.md asks for.
var targetLabels = []string{"job", "instance", "namespace", "pod", "service", "container", "endpoint"}

func (c catalog) add(name string, labels ...string) map[string]map[string]bool {
	if c[name] == nil {
		c[name] = map[string]map[string]bool{}
	}
	for _, l := range append(labels, targetLabels...) {
		if _, ok := c[name][l]; !ok {
			c[name][l] = nil
		}
	}
	return c[name]
}

// closed records values as the complete set of label's values on name.
func (c catalog) closed(name, label string, values ...string) {
	set := map[string]bool{}
	for _, v := range values {
		set[v] = true
	}
	c.add(name, label)[label] = set
}

// scrapeTimeout bounds each wait on the stackdome process: waiting for an
// external process is the point here.
const scrapeTimeout = 30 * time.Second

var buildStackdome = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "stackdome-monitoring-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "stackdome")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", &buildError{err, out}
	}
	return bin, nil
})

type buildError struct {
	err error
	out []byte
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + string(e.out) }

// stackdomeExports runs the real `stackdome serve` on loopback, its hooks
// over mutual TLS as the chart runs them (hooksTLS), makes each of
// its metric families appear — a sync that asks for a dial, a customize, an
// error page — and returns what /metrics on its metrics port then serves. The dial it asks for
// targets a fixture pod IP outside --dial-allow, so nothing is dialed.
func stackdomeExports(t *testing.T) map[string]*dto.MetricFamily {
	t.Helper()
	bin, err := buildStackdome()
	if err != nil {
		t.Fatal(err)
	}
	tlsFlags, clientTLS := hooksTLS(t)
	cmd := exec.Command(bin, append([]string{"serve", "--listen=127.0.0.1:0", "--error-pages-listen=127.0.0.1:0", "--metrics-listen=127.0.0.1:0",
		"--drain-delay=0s", "--log-format=json", "--dial-allow=127.255.255.254/32"}, tlsFlags...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
	})
	serving := make(chan map[string]any, 1)
	go func() {
		s := bufio.NewScanner(stdout)
		for s.Scan() {
			var m map[string]any
			if json.Unmarshal(s.Bytes(), &m) == nil && m["msg"] == "serving" {
				serving <- m
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	var addrs map[string]any
	select {
	case addrs = <-serving:
	case <-time.After(scrapeTimeout):
		t.Fatal("stackdome serve logged no serving line")
	}
	hooks, pages, metrics := "https://"+addrs["hooks"].(string), "http://"+addrs["errorPages"].(string), "http://"+addrs["metrics"].(string)
	client := &http.Client{Timeout: scrapeTimeout, Transport: &http.Transport{TLSClientConfig: clientTLS}}
	do := func(method, url, file string) []byte {
		t.Helper()
		var body io.Reader = http.NoBody
		if file != "" {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			body = bytes.NewReader(b)
		}
		req, err := http.NewRequest(method, url, body)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	do("POST", hooks+"/sync", filepath.Join(repoRoot, "testdata", "sync", "serving.request.json"))
	do("POST", hooks+"/customize", "") // a 400, which is a series too
	do("GET", pages+"/_errors/503", "")

	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(do("GET", metrics+"/metrics", "")))
	if err != nil {
		t.Fatal(err)
	}
	return families
}

// stackdomeCatalog turns a scrape into a catalog: a histogram x gives
// x_bucket (with le), x_count and x_sum. The label values of the verifier's
// outcome and refusal reason are closed sets: stackdome creates every one
// at start.
func stackdomeCatalog(families map[string]*dto.MetricFamily) catalog {
	c := catalog{}
	for name, f := range families {
		names := []string{name}
		if f.GetType() == dto.MetricType_HISTOGRAM {
			names = []string{name + "_bucket", name + "_count", name + "_sum"}
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, lp := range m.GetLabel() {
				labels = append(labels, lp.GetName())
			}
			for _, n := range names {
				c.add(n, labels...)
			}
			if f.GetType() == dto.MetricType_HISTOGRAM {
				c.add(name+"_bucket", "le")
			}
		}
		if len(f.GetMetric()) == 0 {
			c.add(name)
		}
	}
	for _, closed := range []struct{ metric, label string }{
		{"stackdome_portcheck_dials_total", "outcome"},
		{"stackdome_portcheck_enqueue_refusals_total", "reason"},
	} {
		var values []string
		for _, m := range families[closed.metric].GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == closed.label {
					values = append(values, lp.GetValue())
				}
			}
		}
		c.closed(closed.metric, closed.label, values...)
	}
	return c
}

// hookBuckets returns the upper bounds of stackdome_hook_request_duration_seconds.
func hookBuckets(t *testing.T, families map[string]*dto.MetricFamily) []float64 {
	t.Helper()
	f := families["stackdome_hook_request_duration_seconds"]
	if f == nil || len(f.GetMetric()) == 0 {
		t.Fatal("stackdome exports no stackdome_hook_request_duration_seconds")
	}
	var bounds []float64
	for _, b := range f.GetMetric()[0].GetHistogram().GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
	}
	sort.Float64s(bounds)
	return bounds
}

// TestStackdomeExportsWhatTheChartAssumes pins the families the rules and
// the dashboard read to the real binary's /metrics, with the labels they
// group by — so a renamed metric or label fails here, next to the scrape.
func TestStackdomeExportsWhatTheChartAssumes(t *testing.T) {
	c := stackdomeCatalog(stackdomeExports(t))
	for name, labels := range map[string][]string{
		"stackdome_hook_requests_total":                  {"hook", "code"},
		"stackdome_hook_request_duration_seconds_bucket": {"hook", "le"},
		"stackdome_hook_dial_jobs_total":                 {"result"},
		"stackdome_portcheck_dials_total":                {"outcome"},
		"stackdome_portcheck_enqueue_refusals_total":     {"reason"},
		"stackdome_portcheck_undialed_ports_total":       nil,
		"stackdome_portcheck_queue_depth":                nil,
		"stackdome_error_pages_served_total":             {"code", "format"},
	} {
		if c[name] == nil {
			t.Errorf("stackdome does not export %s", name)
			continue
		}
		for _, l := range labels {
			if _, ok := c[name][l]; !ok {
				t.Errorf("%s has no label %s", name, l)
			}
		}
	}
	if !c["stackdome_portcheck_enqueue_refusals_total"]["reason"]["queue_full"] {
		t.Errorf("no queue_full refusal reason: %v", c["stackdome_portcheck_enqueue_refusals_total"]["reason"])
	}
}

// TestHookLatencyThresholdIsABucket: for every hook timeout, the alert's
// threshold is the largest bucket of the real histogram within it — the
// chart's copy of the bucket list is the binary's.
func TestHookLatencyThresholdIsABucket(t *testing.T) {
	buckets := hookBuckets(t, stackdomeExports(t))
	for _, timeout := range []string{"5s", "1s", "700ms", "30s", "250ms", "1.2ms"} {
		t.Run(timeout, func(t *testing.T) {
			d, err := time.ParseDuration(timeout)
			if err != nil {
				t.Fatal(err)
			}
			want := 0.0
			for _, b := range buckets {
				if b <= d.Seconds() {
					want = b
				}
			}
			groups, _ := renderRules(t, "compositeController.hookTimeout="+timeout)
			for _, g := range groups.Groups {
				for _, r := range g.Rules {
					if r.Alert != "StackdomeHookLatencyHigh" {
						continue
					}
					got, err := thresholdOf(r.Expr)
					if err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Errorf("threshold %v, want %v: the largest of the buckets %v within %s", got, want, buckets, timeout)
					}
					return
				}
			}
			t.Fatal("no StackdomeHookLatencyHigh")
		})
	}
}

// thresholdOf returns the number an expression `… >= N` compares with.
func thresholdOf(expr string) (float64, error) {
	e, err := parseExpr(expr)
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(numberRHS(e), 64)
}
