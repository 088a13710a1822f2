//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// answer is one HTTP answer through Traefik.
type answer struct {
	status      int
	contentType string
	body        string
}

// through sends GET path to an entry point of Traefik with a Host header and,
// when not empty, Accept and X-Request-Id.
func through(base, host, path, accept, requestID string) (answer, error) {
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		return answer{}, err
	}
	req.Host = host
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if requestID != "" {
		req.Header.Set("X-Request-Id", requestID)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, err
	}
	return answer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: string(body)}, nil
}

// Accept headers of the two kinds of clients the pages are for.
const (
	browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	axiosAccept   = "application/json, text/plain, */*"
)

// check is one request through Traefik and what its answer must be.
type check struct {
	name              string
	host, path        string
	accept, requestID string
	status            int
	want              func(answer) error // nil: the status is all
}

// isPage requires stackdome's HTML page for code, showing requestID when
// not empty.
func isPage(code int, title, requestID string) func(answer) error {
	return func(a answer) error {
		if !strings.HasPrefix(a.contentType, "text/html") {
			return fmt.Errorf("Content-Type %q, want stackdome's text/html page", a.contentType)
		}
		if !strings.Contains(a.body, "<title>"+title+"</title>") {
			return fmt.Errorf("body is not stackdome's %d page: %.200q", code, a.body)
		}
		if requestID != "" && !strings.Contains(a.body, "Request ID <code>"+requestID+"</code>") {
			return fmt.Errorf("the page does not show request id %q", requestID)
		}
		return nil
	}
}

// isEnvelope requires stackdome's JSON error envelope for code.
func isEnvelope(code int) func(answer) error {
	return func(a answer) error {
		if !strings.HasPrefix(a.contentType, "application/json") {
			return fmt.Errorf("Content-Type %q, want stackdome's application/json envelope", a.contentType)
		}
		var env struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(a.body), &env); err != nil {
			return fmt.Errorf("body is not the JSON envelope: %v: %.200q", err, a.body)
		}
		if env.Error.Code != code || env.Error.Message != http.StatusText(code) {
			return fmt.Errorf("envelope %+v, want code %d message %q", env.Error, code, http.StatusText(code))
		}
		return nil
	}
}

// isBody requires the exact body (the app's own answer, untouched).
func isBody(want string) func(answer) error {
	return func(a answer) error {
		if a.body != want {
			return fmt.Errorf("body %.200q, want %q", a.body, want)
		}
		return nil
	}
}

// runChecks sends each check through the web entry point and reports every
// failure under the phase's name.
func runChecks(t *testing.T, tr *framework.Traefik, phase string, checks []check) {
	t.Helper()
	for _, c := range checks {
		a, err := through(tr.Web, c.host, c.path, c.accept, c.requestID)
		if err != nil {
			t.Errorf("%s: %s: %v", phase, c.name, err)
			continue
		}
		if a.status != c.status {
			t.Errorf("%s: %s: status %d, want %d (body %.200q)", phase, c.name, a.status, c.status, a.body)
			continue
		}
		if c.want != nil {
			if err := c.want(a); err != nil {
				t.Errorf("%s: %s: %v", phase, c.name, err)
				continue
			}
		}
		t.Logf("%s: %s: %d %s — ok", phase, c.name, a.status, a.contentType)
	}
}

// waitRouters polls Traefik's API until cond holds for its HTTP routers —
// Traefik applies a change a couple of seconds after it sees it — and then
// requires every router it built to be enabled.
func waitRouters(t *testing.T, tr *framework.Traefik, what string, cond func([]framework.Router) error) []framework.Router {
	t.Helper()
	var rs []framework.Router
	err := framework.WaitUntil(45*time.Second, 250*time.Millisecond, what, func() (bool, error) {
		if done, err := tr.Proc.Exited(); done {
			return false, fmt.Errorf("traefik exited (%v)", err)
		}
		var err error
		if rs, err = tr.Routers(); err != nil {
			return false, err
		}
		if err := cond(rs); err != nil {
			return false, err
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("%v\nrouters: %s", err, mustJSON(rs))
	}
	for _, r := range rs {
		if r.Status != "enabled" {
			t.Errorf("%s: router %s is %s: %v", what, r.Name, r.Status, r.Error)
		}
	}
	return rs
}

// hostRouter finds the router of rule Host(`host`).
func hostRouter(rs []framework.Router, host string) (framework.Router, bool) {
	for _, r := range rs {
		if r.Rule == "Host(`"+host+"`)" {
			return r, true
		}
	}
	return framework.Router{}, false
}

// appRouterWith is a waitRouters condition: the app's router exists with
// exactly these middlewares.
func appRouterWith(host string, middlewares ...string) func([]framework.Router) error {
	return func(rs []framework.Router) error {
		r, ok := hostRouter(rs, host)
		if !ok {
			return fmt.Errorf("no router for Host(`%s`) yet", host)
		}
		if !slices.Equal(r.Middlewares, middlewares) {
			return fmt.Errorf("router %s has middlewares %v, want %v", r.Name, r.Middlewares, middlewares)
		}
		return nil
	}
}
