package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/metacontroller"
)

// pastSettle is got, a live server's answer to a golden request, as the
// golden answer reads it: a fixture that returns children it does not
// observe (a first sync) answers, days after its clock, that they were not
// created (ChildNotCreated, no resync; hooks TestSyncDoesNotDependOnTheDay);
// those four conditions and the resync are taken from want, after checking
// got says so. The first sync of a new parent (no status stored) has no
// earlier clock to keep: every time of its status is the answer's own now,
// so those are taken from want, after checking they are all the same one.
// Any other answer is got.
func pastSettle(t *testing.T, want, got []byte) []byte {
	t.Helper()
	var w, g map[string]any
	require.NoError(t, json.Unmarshal(want, &w))
	require.NoError(t, json.Unmarshal(got, &g))
	ws, gs := w["status"].(map[string]any), g["status"].(map[string]any)
	if ws["childrenMissingSince"] == nil {
		return got
	}
	if since := gs["childrenMissingSince"]; since != ws["childrenMissingSince"] {
		gs["childrenMissingSince"] = ws["childrenMissingSince"]
		for _, c := range gs["conditions"].([]any) {
			c := c.(map[string]any)
			require.Equal(t, since, c["lastTransitionTime"], "a first sync stamps its status with one now: %v", c)
			c["lastTransitionTime"] = ws["childrenMissingSince"]
		}
		b, err := json.Marshal(g)
		require.NoError(t, err)
		return b
	}
	gc, wc := gs["conditions"].([]any), ws["conditions"].([]any)
	for _, c := range gc[:4] {
		require.Equal(t, "ChildNotCreated", c.(map[string]any)["reason"], "children missing for days: %v", c)
	}
	copy(gc, wc[:4])
	if r, ok := w["resyncAfterSeconds"]; ok {
		g["resyncAfterSeconds"] = r
	}
	b, err := json.Marshal(g)
	require.NoError(t, err)
	return b
}

func TestFlagsFromEnvironment(t *testing.T) {
	env := map[string]string{"STACKDOME_PORT_CHECK_GRACE": "45s", "STACKDOME_DIAL_ALLOW": "127.0.0.0/8", "STACKDOME_LISTEN": ":9999", "STACKDOME_INSECURE_PLAIN_HTTP": "true"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	c, err := parseFlags("serve", []string{"--listen", ":7000"}, lookup, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 45*time.Second, c.hooks.PortCheckGrace, "env sets a flag not given")
	require.Equal(t, ":7000", c.listen, "a flag on the command line wins over env")
	require.Len(t, c.dialAllow, 1)

	c, err = parseFlags("serve", []string{"--error-service-name=", "--insecure-plain-http"}, func(string) (string, bool) { return "", false }, io.Discard)
	require.NoError(t, err)
	require.True(t, c.hooks.NoErrorService, "an empty error service name means no error pages are installed")

	for name, bad := range map[string][]string{
		"negative grace":  {"--port-check-grace", "-1s"},
		"bad cidr":        {"--dial-allow", "10.0.0.0/33"},
		"bad log format":  {"--log-format", "xml"},
		"no entry points": {"--entry-points", " , "},
		"stray argument":  {"extra"},
		"unknown flag":    {"--nope"},
	} {
		_, err := parseFlags("serve", bad, func(string) (string, bool) { return "", false }, io.Discard)
		require.Error(t, err, name)
	}
	_, err = parseFlags("serve", nil, func(k string) (string, bool) { return "abc", k == "STACKDOME_DIAL_WORKERS" }, io.Discard)
	require.ErrorContains(t, err, "STACKDOME_DIAL_WORKERS")
}

// TestSyncCommandAnswersTheGoldenFixtures: `stackdome sync -f` is the
// server's code path, offline.
func TestSyncCommandAnswersTheGoldenFixtures(t *testing.T) {
	paths, err := filepath.Glob("testdata/sync/*.request.json")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			var out bytes.Buffer
			err := run(context.Background(), []string{"sync", "-f", p}, nil, &out, io.Discard)
			want, rerr := os.ReadFile(strings.TrimSuffix(p, ".request.json") + ".response.json")
			require.NoError(t, rerr)
			// An InvalidSpec answer is printed, then fails (exit 1) with
			// one line saying why.
			var answer metacontroller.SyncResponse
			require.NoError(t, json.Unmarshal(want, &answer))
			if msg, invalid := invalidSpec(&answer); invalid {
				require.EqualError(t, err, "the answer is InvalidSpec: "+msg)
				require.NotContains(t, err.Error(), "\n")
				require.Equal(t, 1, exitCode(err))
			} else {
				require.NoError(t, err)
			}
			require.JSONEq(t, string(want), string(pastSettle(t, want, out.Bytes())))
		})
	}
	var out bytes.Buffer
	require.Error(t, run(context.Background(), []string{"sync"}, strings.NewReader("{"), &out, io.Discard), "malformed stdin fails")
	// What teams hand it by mistake: their StackResource, YAML or JSON.
	for _, in := range []string{"apiVersion: stackdome.io/v1alpha1\nkind: StackResource\nmetadata: {name: a}\nspec: {}\n",
		`{"apiVersion":"stackdome.io/v1alpha1","kind":"StackResource","metadata":{"name":"a"},"spec":{}}`} {
		require.EqualError(t, run(context.Background(), []string{"sync"}, strings.NewReader(in), &out, io.Discard),
			"the input is a StackResource, not a sync request: stackdome render -f <file> prints the children of its first sync")
	}
}

// TestServe runs the real servers on loopback: golden fixtures answered,
// bad requests refused, the server still up after them, pages and metrics
// each on their own port only (no /sync where Prometheus scrapes, no
// /metrics where Metacontroller calls), and a clean stop on cancellation.
func TestServe(t *testing.T) {
	srv := runServe(t, "--dial-allow", "127.0.0.0/8", "--dial-allow-loopback")
	require.NotEmpty(t, srv.addrs["metrics"])
	hooksURL, pagesURL, metricsURL := "http://"+srv.addrs["hooks"], "http://"+srv.addrs["errorPages"], "http://"+srv.addrs["metrics"]

	paths, _ := filepath.Glob("testdata/sync/*.request.json")
	for _, p := range paths {
		body, err := os.ReadFile(p)
		require.NoError(t, err)
		resp, err := http.Post(hooksURL+"/sync", "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode, string(got))
		want, _ := os.ReadFile(strings.TrimSuffix(p, ".request.json") + ".response.json")
		require.JSONEq(t, string(want), string(pastSettle(t, want, got)), p)
	}
	for _, tc := range []struct {
		method, url string
		body        io.Reader
		code        int
	}{
		{"POST", hooksURL + "/sync", strings.NewReader("{not json"), 400},
		{"GET", hooksURL + "/sync", nil, 405},
		{"POST", hooksURL + "/sync", bytes.NewReader(bytes.Repeat([]byte("x"), 40<<20)), 413},
		{"GET", hooksURL + "/healthz", nil, 200},
		{"GET", hooksURL + "/readyz", nil, 200},
		{"GET", hooksURL + "/metrics", nil, 404},
		{"POST", metricsURL + "/sync", strings.NewReader("{}"), 404},
		{"POST", metricsURL + "/customize", strings.NewReader("{}"), 404},
		{"GET", metricsURL + "/healthz", nil, 404},
		{"GET", metricsURL + "/readyz", nil, 404},
		{"GET", metricsURL + "/_errors/503", nil, 404},
		{"GET", pagesURL + "/healthz", nil, 404},
		{"GET", pagesURL + "/metrics", nil, 404},
		{"POST", pagesURL + "/sync", strings.NewReader("{}"), 404},
		{"GET", pagesURL + "/_errors/503", nil, 503},
	} {
		req, _ := http.NewRequest(tc.method, tc.url, tc.body)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			require.Equal(t, tc.code, resp.StatusCode, "%s %s", tc.method, tc.url)
		} else {
			// A server may close the connection on a body over the limit
			// before the client finishes sending it.
			require.Equal(t, 413, tc.code, "%s %s: %v", tc.method, tc.url, err)
		}
	}
	resp, err := http.Get(metricsURL + "/metrics")
	require.NoError(t, err)
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	require.Contains(t, string(metrics), "stackdome_hook_requests_total")
	require.Contains(t, string(metrics), `stackdome_error_pages_served_total{code="503",format="json"} 1`)
	b := thisBuild()
	require.Contains(t, string(metrics), fmt.Sprintf("stackdome_build_info{goversion=%q,revision=%q,version=%q} 1\n", runtime.Version(), b.revision, version))
	require.NoError(t, srv.stop())
}

// TestPprofOnlyWhereAsked: Go's profiles are served on --pprof-listen and
// nowhere else, and not at all without it; a CPU profile longer than
// --write-timeout is answered whole (net/http/pprof moves the deadline).
func TestPprofOnlyWhereAsked(t *testing.T) {
	for name, withPprof := range map[string]bool{"default": false, "--pprof-listen": true} {
		t.Run(name, func(t *testing.T) {
			args := []string{"--write-timeout", "1s"}
			if withPprof {
				args = append(args, "--pprof-listen", "127.0.0.1:0")
			}
			srv := runServe(t, args...)
			get := func(url string) (int, []byte) {
				resp, err := http.Get(url)
				require.NoError(t, err)
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				return resp.StatusCode, b
			}
			for _, key := range []string{"hooks", "errorPages", "metrics"} {
				code, _ := get("http://" + srv.addrs[key] + "/debug/pprof/")
				require.Equal(t, 404, code, "/debug/pprof/ on the %s address", key)
			}
			pprofAddr, ok := srv.addrs["pprof"]
			require.Equal(t, withPprof, ok, "a pprof address in the serving line: %v", srv.addrs)
			if withPprof {
				code, index := get("http://" + pprofAddr + "/debug/pprof/")
				require.Equal(t, 200, code)
				require.Contains(t, string(index), "goroutine")
				code, profile := get("http://" + pprofAddr + "/debug/pprof/profile?seconds=2")
				require.Equal(t, 200, code, string(profile))
				require.True(t, bytes.HasPrefix(profile, []byte{0x1f, 0x8b}), "a gzipped profile, got %q", profile[:min(len(profile), 64)])
				code, _ = get("http://" + pprofAddr + "/metrics")
				require.Equal(t, 404, code)
			}
			require.NoError(t, srv.stop())
		})
	}
}

// inProcess is a `stackdome serve` run in this process by runServe: the
// addresses its "serving" log line names, by server (hooks, errorPages,
// metrics, pprof), and stop, which cancels it and returns what run
// returned, failing on a hang.
type inProcess struct {
	addrs map[string]string
	stop  func() error
}

// runServe runs `stackdome serve` with args on loopback (its three
// listeners on 127.0.0.1:0, no drain delay, plain HTTP unless args give
// --tls-cert-file, then args) until the test ends
// or stop is called.
func runServe(t *testing.T, args ...string) inProcess {
	t.Helper()
	base := []string{"serve", "--listen", "127.0.0.1:0", "--error-pages-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--drain-delay", "0s"}
	if !slices.Contains(args, "--tls-cert-file") {
		base = append(base, "--insecure-plain-http")
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append(base, args...), nil, pw, io.Discard)
		pw.Close()
	}()
	var line map[string]any
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"msg":"serving"`) {
			require.NoError(t, json.Unmarshal(sc.Bytes(), &line))
			break
		}
	}
	go io.Copy(io.Discard, pr)
	addrs := map[string]string{}
	for k, v := range line {
		if a, ok := v.(string); ok && k != "msg" && k != "level" && k != "time" {
			addrs[k] = a
		}
	}
	var once sync.Once
	var err error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				err = errors.New("serve did not stop")
			}
		})
		return err
	}
	t.Cleanup(func() { stop() })
	require.NotEmpty(t, addrs["hooks"], "serve did not start")
	return inProcess{addrs: addrs, stop: stop}
}
