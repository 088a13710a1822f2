package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// serveMode runs `stackdome serve` in this process with args on loopback
// and returns the addresses its "serving" line names; it stops at cleanup.
func serveMode(t *testing.T, args ...string) map[string]any {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--listen", "127.0.0.1:0", "--error-pages-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--insecure-plain-http", "--drain-delay", "0s", "--dial-allow", "127.0.0.0/8"}, args...), nil, pw, io.Discard)
		pw.Close()
	}()
	lines := logLines(pr)
	serving := awaitLog(t, lines, "serving")
	go func() {
		for range lines {
		}
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(hangDeadline):
			t.Error("serve did not stop")
		}
	})
	return serving
}

func status(t *testing.T, method, url string, body []byte) int {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// TestServeModes: --hooks=false is the chart's error-page Deployment (pages,
// metrics, and health and readiness on --listen, no /sync), --pages=false
// its hook Deployment (nothing bound for the pages).
func TestServeModes(t *testing.T) {
	sync, err := os.ReadFile("testdata/sync/serving.request.json")
	require.NoError(t, err)

	t.Run("pages only", func(t *testing.T) {
		s := serveMode(t, "--hooks=false")
		hooks, pages, metrics := "http://"+s["hooks"].(string), "http://"+s["errorPages"].(string), "http://"+s["metrics"].(string)
		require.Equal(t, http.StatusNotFound, status(t, "POST", hooks+"/sync", sync))
		require.Equal(t, http.StatusNotFound, status(t, "POST", hooks+"/customize", []byte("{}")))
		require.Equal(t, http.StatusOK, status(t, "GET", hooks+"/healthz", nil))
		require.Equal(t, http.StatusOK, status(t, "GET", hooks+"/readyz", nil))
		require.Equal(t, http.StatusServiceUnavailable, status(t, "GET", pages+"/_errors/503", nil))
		require.Equal(t, http.StatusOK, status(t, "GET", metrics+"/metrics", nil))
	})
	t.Run("hooks only", func(t *testing.T) {
		s := serveMode(t, "--pages=false")
		require.NotContains(t, s, "errorPages")
		hooks := "http://" + s["hooks"].(string)
		require.Equal(t, http.StatusOK, status(t, "POST", hooks+"/sync", sync))
		require.Equal(t, http.StatusOK, status(t, "GET", hooks+"/readyz", nil))
		b, _ := json.Marshal(s)
		require.False(t, strings.Contains(string(b), "error"), "serving: %s", b)
	})
}
