package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/internal/mcrequest"
	"github.com/stackdome/stackdome/schema"
)

// TestForgedPortsAreRefused is issue 25's forged request: the running app of
// invalid-spec-running with 65,535 ports in its spec (past the CRD's 64,
// as an older CRD or a forged request could hold). On main it answered 200
// with 15.9 MB, an 8.1 MB status.ports and one dial goroutine per port. The
// answer now is the invalid-spec path: Stalled=True InvalidSpec naming the
// limit, the children kept exactly as the golden invalid spec keeps them,
// nothing dialed, and a small body.
func TestForgedPortsAreRefused(t *testing.T) {
	stem := filepath.Join("..", "testdata", "sync", "invalid-spec-running")
	raw, err := os.ReadFile(stem + ".request.json")
	require.NoError(t, err)
	var req map[string]any
	require.NoError(t, json.Unmarshal(raw, &req))
	ports := make([]any, 65535)
	for i := range ports {
		ports[i] = map[string]any{"name": fmt.Sprintf("p%d", i), "port": i + 1, "public": i == 0}
	}
	mcrequest.Map(req, "parent", "spec")["ports"] = ports
	body, err := json.Marshal(req)
	require.NoError(t, err)

	rec := &recorder{}
	router, _ := newTestRouter(t, rec)
	// ServeHTTP, not post: post's hang bound is the fuzzer's, and 2 MB
	// of forged ports decode for seconds under -race on a loaded machine.
	w := httptest.NewRecorder()
	router.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/sync", bytes.NewReader(body)))
	require.Equal(t, http.StatusOK, w.Code, "%.300s", w.Body.String())
	require.Less(t, w.Body.Len(), 64<<10, "the answer is small, not one entry per forged port")
	require.Empty(t, rec.enqueued, "nothing is dialed for an invalid spec")

	var got struct {
		Children []json.RawMessage `json:"children"`
		Status   schema.Status     `json:"status"`
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &got))
	stalled := find(got.Status.Conditions, schema.CondStalled)
	require.NotNil(t, stalled)
	require.Equal(t, string(schema.ReasonInvalidSpec), stalled.Reason)
	require.Contains(t, stalled.Message, "spec.ports: Too many: 65535: must have at most 64 items")
	require.LessOrEqual(t, len(got.Status.Ports), schema.MaxPorts)

	golden, err := os.ReadFile(stem + ".response.json")
	require.NoError(t, err)
	var want struct {
		Children []json.RawMessage `json:"children"`
	}
	require.NoError(t, json.Unmarshal(golden, &want))
	require.Len(t, got.Children, len(want.Children), "every running child is kept")
	for i := range want.Children {
		require.JSONEq(t, string(want.Children[i]), string(got.Children[i]), "child %d kept as last applied", i)
	}
}
