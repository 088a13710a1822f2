//go:build e2e

package framework

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// What stackdome's error pages look like to a client through Traefik: the
// answer it reads and the checks it holds the answer to. The page server's
// own tests hold the pages byte for byte (errorpages); these only tell a
// page of stackdome's from anything else that may answer (the app, Traefik's
// own "Bad Gateway").

// Accept headers of the two kinds of clients the pages are for.
const (
	BrowserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	AxiosAccept   = "application/json, text/plain, */*"
)

// Answer is an HTTP answer as a client read it.
type Answer struct {
	Status      int
	ContentType string
	Body        string
}

// Check holds an answer to what it must be, or says how it is not.
type Check func(Answer) error

// IsPage requires stackdome's HTML page for code, titled title, showing
// requestID when not empty.
func IsPage(code int, title, requestID string) Check {
	return func(a Answer) error {
		if a.Status != code {
			return fmt.Errorf("status %d, want %d", a.Status, code)
		}
		if !strings.HasPrefix(a.ContentType, "text/html") {
			return fmt.Errorf("Content-Type %q, want stackdome's text/html page", a.ContentType)
		}
		if !strings.Contains(a.Body, "<title>"+title+"</title>") {
			return fmt.Errorf("body is not stackdome's %d page: %.200q", code, a.Body)
		}
		if requestID != "" && !strings.Contains(a.Body, "Request ID <code>"+requestID+"</code>") {
			return fmt.Errorf("the page does not show request id %q", requestID)
		}
		return nil
	}
}

// IsEnvelope requires stackdome's JSON error envelope for code.
func IsEnvelope(code int) Check {
	return func(a Answer) error {
		if a.Status != code {
			return fmt.Errorf("status %d, want %d", a.Status, code)
		}
		if !strings.HasPrefix(a.ContentType, "application/json") {
			return fmt.Errorf("Content-Type %q, want stackdome's application/json envelope", a.ContentType)
		}
		var env struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(a.Body), &env); err != nil {
			return fmt.Errorf("body is not the JSON envelope: %v: %.200q", err, a.Body)
		}
		if env.Error.Code != code || env.Error.Message != http.StatusText(code) {
			return fmt.Errorf("envelope %+v, want code %d message %q", env.Error, code, http.StatusText(code))
		}
		return nil
	}
}

// HasBody requires every fragment in the body.
func HasBody(fragments ...string) Check {
	return func(a Answer) error {
		for _, f := range fragments {
			if !strings.Contains(a.Body, f) {
				return fmt.Errorf("body lacks %q: %.300q", f, a.Body)
			}
		}
		return nil
	}
}

// All requires every check, and reports the first that fails.
func All(checks ...Check) Check {
	return func(a Answer) error {
		for _, c := range checks {
			if err := c(a); err != nil {
				return err
			}
		}
		return nil
	}
}
