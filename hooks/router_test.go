package hooks

import (
	"bytes"
	"encoding/json"
	"github.com/stackdome/stackdome/schema"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/portcheck"
)

// recorder is a Scheduler that records what the handler schedules and knows
// no verdicts, like a freshly started verifier.
type recorder struct {
	noVerdicts
	enqueued []portcheck.Job
	forgot   []portcheck.Key
}

func (r *recorder) Enqueue(j portcheck.Job) bool { r.enqueued = append(r.enqueued, j); return true }
func (r *recorder) Forget(k portcheck.Key)       { r.forgot = append(r.forgot, k) }

func newTestRouter(t *testing.T, sched Scheduler) (http.Handler, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	h := &Handler{Verifier: sched, Now: func() time.Time { return testNow }, Metrics: NewMetrics(reg)}
	return Router(h, func() bool { return true }, promhttp.HandlerFor(reg, promhttp.HandlerOpts{})), reg
}

// TestRouterServesTheGoldenFixtures: the HTTP path gives the pure path's
// answer, byte for byte as JSON, and schedules exactly the dials Sync asks for.
func TestRouterServesTheGoldenFixtures(t *testing.T) {
	for _, stem := range fixtures(t) {
		t.Run(filepath.Base(stem), func(t *testing.T) {
			rec := &recorder{}
			router, _ := newTestRouter(t, rec)
			body, err := os.ReadFile(stem + ".request.json")
			require.NoError(t, err)
			w := httptest.NewRecorder()
			router.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(body)))
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			require.Equal(t, "application/json", w.Header().Get("Content-Type"))
			want, err := os.ReadFile(stem + ".response.json")
			require.NoError(t, err)
			require.JSONEq(t, string(want), w.Body.String())

			_, jobs, err := Sync(readRequest(t, stem), nil, testNow)
			require.NoError(t, err)
			require.Len(t, rec.enqueued, len(jobs))
			for _, j := range rec.enqueued {
				require.True(t, strings.HasPrefix(j.IP, "127."), "fixture pod IPs are loopback: %s", j.IP)
			}
		})
	}
}

func TestRouterRefusesBadInput(t *testing.T) {
	serving, err := os.ReadFile(filepath.Join("..", "testdata", "sync", "serving.request.json"))
	require.NoError(t, err)
	huge := bytes.Repeat([]byte(" "), 40<<20)
	tests := map[string]struct {
		method, path string
		body         []byte
		code         int
		reason       string
	}{
		"malformed json":      {method: "POST", path: "/sync", body: []byte(`{"parent":`), code: 400, reason: "decoding request"},
		"not an object":       {method: "POST", path: "/sync", body: []byte(`[1,2]`), code: 400, reason: "decoding request"},
		"empty body":          {method: "POST", path: "/sync", body: nil, code: 400, reason: "decoding request"},
		"trailing garbage":    {method: "POST", path: "/sync", body: append(append([]byte{}, serving...), []byte("}{")...), code: 400, reason: "decoding request"},
		"missing parent":      {method: "POST", path: "/sync", body: []byte(`{"children":{}}`), code: 400, reason: "request has no parent"},
		"null parent":         {method: "POST", path: "/sync", body: []byte(`{"parent":null}`), code: 400, reason: "request has no parent"},
		"parent without name": {method: "POST", path: "/sync", body: []byte(`{"parent":{"kind":"StackResource","spec":{}}}`), code: 400, reason: "no metadata.name"},
		"wrong parent kind":   {method: "POST", path: "/sync", body: []byte(`{"parent":{"kind":"Toy","metadata":{"name":"t"}}}`), code: 400, reason: "not a StackResource"},
		"children wrong type": {method: "POST", path: "/sync", body: []byte(`{"parent":{"metadata":{"name":"t"}},"children":[]}`), code: 400, reason: "decoding request"},
		"40 MiB body":         {method: "POST", path: "/sync", body: huge, code: 413, reason: "exceeds"},
		"GET /sync":           {method: "GET", path: "/sync", code: 405},
		"PUT /customize":      {method: "PUT", path: "/customize", code: 405},
		"POST /healthz":       {method: "POST", path: "/healthz", code: 405},
		"unknown path":        {method: "GET", path: "/nope", code: 404},
		"customize malformed": {method: "POST", path: "/customize", body: []byte(`{`), code: 400, reason: "decoding request"},
		"customize no parent": {method: "POST", path: "/customize", body: []byte(`{}`), code: 400, reason: "request has no parent"},
		"invalid spec, nothing to keep": {
			method: "POST", path: "/sync", code: 422, reason: "cannot be kept",
			body: []byte(`{"parent":{"kind":"StackResource","metadata":{"name":"t","namespace":"n"},"spec":{"type":"Service"}},` +
				`"children":{"Deployment.apps/v1":{"t":{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"t"}}}}}`),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			router, _ := newTestRouter(t, &recorder{})
			w := httptest.NewRecorder()
			router.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, bytes.NewReader(tc.body)))
			require.Equal(t, tc.code, w.Code, w.Body.String())
			require.Contains(t, w.Body.String(), tc.reason)
			require.Equal(t, 1, strings.Count(w.Body.String(), "\n"), "one line: %q", w.Body.String())
		})
	}
}

// TestInvalidSpecWithoutChildrenAnswers200: with nothing running there is
// nothing to lose, so an invalid spec is reported in status, not as an error.
func TestInvalidSpecWithoutChildrenAnswers200(t *testing.T) {
	router, _ := newTestRouter(t, &recorder{})
	w := httptest.NewRecorder()
	body := `{"parent":{"kind":"StackResource","metadata":{"name":"t","namespace":"n","generation":1},"spec":{"type":"Service"}},"children":{"Deployment.apps/v1":{}}}`
	router.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/sync", strings.NewReader(body)))
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	var resp struct {
		Children []any `json:"children"`
		Status   struct {
			Conditions []struct{ Type, Status, Reason string } `json:"conditions"`
		} `json:"status"`
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &resp))
	require.NotNil(t, resp.Children, "children is [] never null")
	require.Empty(t, resp.Children)
	require.Contains(t, resp.Status.Conditions, struct{ Type, Status, Reason string }{string(schema.CondStalled), "True", string(schema.ReasonInvalidSpec)})
}

func TestCustomize(t *testing.T) {
	router, _ := newTestRouter(t, &recorder{})
	w := httptest.NewRecorder()
	body, err := os.ReadFile(filepath.Join("..", "testdata", "sync", "serving.request.json"))
	require.NoError(t, err)
	router.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/customize", bytes.NewReader(body)))
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.JSONEq(t, `{"relatedResources":[`+
		`{"apiVersion":"v1","resource":"pods","namespace":"shop","labelSelector":{"matchLabels":{"app.kubernetes.io/instance":"checkout","app.kubernetes.io/managed-by":"stackdome"}}},`+
		`{"apiVersion":"v1","resource":"services","namespace":"stackdome","names":["stackdome-error-pages"]}]}`, w.Body.String())
}

func TestHealthReadyMetrics(t *testing.T) {
	ready := true
	reg := prometheus.NewRegistry()
	h := &Handler{Verifier: &recorder{}, Metrics: NewMetrics(reg)}
	router := Router(h, func() bool { return ready }, promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	get := func(path string) (int, string) {
		w := httptest.NewRecorder()
		router.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		b, _ := io.ReadAll(w.Body)
		return w.Code, string(b)
	}
	code, _ := get("/healthz")
	require.Equal(t, 200, code)
	code, _ = get("/readyz")
	require.Equal(t, 200, code)
	ready = false
	code, _ = get("/readyz")
	require.Equal(t, 503, code, "draining turns /readyz 503")
	code, _ = get("/healthz")
	require.Equal(t, 200, code, "draining is not dying")

	w := httptest.NewRecorder()
	router.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/sync", strings.NewReader("{")))
	_, body := get("/metrics")
	require.Contains(t, body, `stackdome_hook_requests_total{code="400",hook="sync"} 1`)
	require.Contains(t, body, `stackdome_hook_request_duration_seconds_count{hook="sync"} 1`)
}
