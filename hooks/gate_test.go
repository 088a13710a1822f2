package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/internal/loopback"
	"github.com/stackdome/stackdome/internal/mcrequest"
	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/portcheck"
	"github.com/stackdome/stackdome/schema"
)

// fakeClock is the one clock of the handler and the verifier in a test.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestGateEndToEnd drives the real HTTP handler and the real verifier
// against real loopback sockets: a pod at 127.0.0.1 declaring one port with a
// listener and one without. Repeated syncs on an injected clock condemn the
// dead port once the grace is over, naming it; then the listener appears, a
// new revision rolls out, and the app reads Available.
func TestGateEndToEnd(t *testing.T) {
	live, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	loopback.Serve(t, live)
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	deadPort := dead.Addr().(*net.TCPAddr).Port
	require.NoError(t, dead.Close()) // nothing listens there now: connections are refused
	livePort := live.Addr().(*net.TCPAddr).Port

	clock := &fakeClock{now: testNow}
	v := portcheck.New(portcheck.Config{Workers: 4, DialTimeout: time.Second, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, AllowLoopback: true})
	v.Now = clock.Now
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { v.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	cfg := Config{PortCheckGrace: time.Minute, VerdictRequeue: 10 * time.Second}
	metrics := NewMetrics(nil)
	router := Router(&Handler{Config: cfg, Verifier: v, Now: clock.Now, Metrics: metrics}, nil, nil)

	spec := map[string]any{"type": "Service", "image": "ghcr.io/acme/app:1", "ports": []any{
		map[string]any{"name": "http", "port": livePort}, map[string]any{"name": "metrics", "port": deadPort}}}
	status := map[string]any{}
	held := 0
	sync := func() schema.Status {
		t.Helper()
		req := gateRequest(t, cfg, spec, status, clock.Now())
		w := httptest.NewRecorder()
		router.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(req)))
		for w.Code == http.StatusTooManyRequests {
			// Held until the dial it asked for lands: Metacontroller
			// syncs again after Retry-After.
			held++
			require.Equal(t, "1", w.Header().Get("Retry-After"))
			key := portcheck.Key{Namespace: "gate", Name: "app", Revision: podRevision(t, req)}
			require.Eventually(t, func() bool { return !v.Pending(key) }, 5*time.Second, time.Millisecond)
			clock.Add(time.Second)
			req = gateRequest(t, cfg, spec, status, clock.Now())
			w = httptest.NewRecorder()
			router.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(req)))
		}
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		var resp struct {
			Status schema.Status `json:"status"`
			Resync float64       `json:"resyncAfterSeconds"`
		}
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &resp))
		status = roundTrip(t, resp.Status)
		key := portcheck.Key{Namespace: "gate", Name: "app", Revision: resp.Status.Revision}
		// The dial happens off the request path; wait for it to land
		// before the next sync, as the requeue would.
		require.Eventually(t, func() bool { return !v.Pending(key) }, 5*time.Second, time.Millisecond)
		return resp.Status
	}

	var condemnedAt, openedAt time.Duration
	for i := 0; i < 30; i++ {
		st := sync()
		if st.PortCheck != nil && st.PortCheck.FailingSince != nil && openedAt == 0 {
			openedAt = st.PortCheck.FailingSince.Sub(testNow)
		}
		if c := find(st.Conditions, schema.CondStalled); c != nil && c.Status == "True" {
			condemnedAt = clock.Now().Sub(testNow)
			require.Equal(t, string(schema.ReasonPortNotListening), c.Reason)
			require.Len(t, st.LastFailureDetails, 1)
			d := st.LastFailureDetails[0]
			require.Equal(t, schema.ReadinessFailure, d.Type)
			require.Equal(t, int32(deadPort), d.Port)
			require.Contains(t, d.Message, "port "+strconv.Itoa(deadPort)+" (metrics) refused connection")
			require.Equal(t, []schema.PortStatus{{Name: "http", Port: int32(livePort), State: schema.PortOpen},
				{Name: "metrics", Port: int32(deadPort), State: schema.PortClosed, Message: "dial tcp 127.0.0.1:" + strconv.Itoa(deadPort) + ": connect: connection refused"}}, st.Ports)
			break
		}
		require.Equal(t, "True", string(find(st.Conditions, schema.CondAvailable).Status), "available until condemned (sync %d)", i)
		clock.Add(10 * time.Second)
	}
	require.NotZero(t, condemnedAt, "never condemned")
	// The window opens at the first refusal read: the first sync is held
	// until its dial lands, and Metacontroller's retry a second later reads
	// the refusal. A refusal from a dial made at or after 1s + grace
	// condemns.
	require.Equal(t, time.Second, openedAt, "the window opened at the sync after the held one")
	require.GreaterOrEqual(t, condemnedAt, openedAt+cfg.PortCheckGrace, "condemned before the grace was over")
	require.LessOrEqual(t, condemnedAt, openedAt+cfg.PortCheckGrace+2*cfg.VerdictRequeue)
	// The first sync, the pod just ready and no verdict known, held its
	// answer until the dial had landed; the sync at the grace's end held
	// its answer until a dial made after it had landed. Once each: no
	// answer said the window was still open.
	require.Equal(t, 2, held, "syncs held")
	require.Equal(t, 2.0, testutil.ToFloat64(metrics.held), "stackdome_hook_syncs_held_total")
	t.Logf("condemned at %s (window opened at %s, grace %s; %d syncs held)", condemnedAt, openedAt, cfg.PortCheckGrace, held)

	// Fix: something listens on the metrics port, and a new image rolls out.
	fixed, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(deadPort))
	require.NoError(t, err)
	loopback.Serve(t, fixed)
	spec["image"] = "ghcr.io/acme/app:2"
	clock.Add(10 * time.Second)
	sync() // first sync of the new revision: dial
	clock.Add(10 * time.Second)
	st := sync()
	require.Equal(t, string(schema.ReasonServing), find(st.Conditions, schema.CondAvailable).Reason, "%+v", st.Conditions)
	require.Equal(t, "True", string(find(st.Conditions, schema.CondAvailable).Status))
	require.Equal(t, "True", string(find(st.Conditions, schema.CondConverged).Status))
	require.NotNil(t, st.PortCheck)
	require.Nil(t, st.PortCheck.FailingSince, "the window is closed")
	require.Equal(t, st.Revision, st.PortCheck.Revision, "the verdict of the new pods")
	require.Empty(t, st.LastFailureDetails)
}

// podRevision is the workload revision of the one pod req relates: the
// verifier's key.
func podRevision(t *testing.T, req []byte) string {
	t.Helper()
	var r metacontroller.SyncRequest
	require.NoError(t, json.Unmarshal(req, &r))
	for _, raw := range r.Related[metacontroller.GroupKey("Pod", "v1")] {
		var pod mcrequest.Object
		require.NoError(t, json.Unmarshal(raw, &pod))
		return mcrequest.Str(pod, "metadata", "labels", schema.LabelPodTemplateHash)
	}
	t.Fatal("the request relates no pod")
	return ""
}

// gateRequest is a sync request for a serving Deployment of spec whose one
// pod, at 127.0.0.1, is ready. Every other child is observed as
// Metacontroller created it: a child missing from the request reads
// ChildNotCreated once the settle time is over.
func gateRequest(t *testing.T, cfg Config, spec, status map[string]any, now time.Time) []byte {
	parent := stackResource(t, mcrequest.StackResource{Name: "app", Namespace: "gate", Generation: 1,
		Spec: mustJSON(t, spec), Status: status})
	desired := firstAnswer(t, cfg, parent, now)
	dep := mcrequest.Find(desired, "Deployment")
	rev := mcrequest.Revision(dep)
	var observed []mcrequest.Object
	for _, c := range desired {
		if c["kind"] != "Deployment" {
			observed = append(observed, mcrequest.Observed(c, parent, len(observed), nil))
		}
	}
	w := scenarioWorkload(t, "serving", dep, nil)
	observed = append(observed, mcrequest.Observed(w, parent, len(observed), w["status"].(map[string]any)))
	pod := scenarioPodObject("gate", "app-"+rev+"-abcde", rev, dep, scenarioPod{IP: "127.0.0.1", Ready: true, Hash: rev})
	return mustJSON(t, standIn(t, cfg, parent, observed, []mcrequest.Object{pod}))
}
