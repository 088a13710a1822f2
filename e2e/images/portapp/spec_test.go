package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParsePort(t *testing.T) {
	for in, want := range map[string]portSpec{
		"8080":            {Port: 8080, When: openAtStart},
		"8080=open":       {Port: 8080, When: openAtStart},
		"9090=never":      {Port: 9090, When: openNever},
		"7070=after:20s":  {Port: 7070, When: openAfter, After: 20 * time.Second},
		"1=after:1m30s":   {Port: 1, When: openAfter, After: 90 * time.Second},
		"65535=after:1ms": {Port: 65535, When: openAfter, After: time.Millisecond},
	} {
		got, err := parsePort(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", in, diff)
		}
	}
}

func TestParsePortRefuses(t *testing.T) {
	for in, want := range map[string]string{
		"":              "want a number from 1 to 65535",
		"0":             "want a number from 1 to 65535",
		"65536":         "want a number from 1 to 65535",
		"http":          "want a number from 1 to 65535",
		"8080=later":    "want PORT, PORT=open, PORT=never or PORT=after:DURATION",
		"8080=after:":   "want after:<positive duration>",
		"8080=after:0s": "want after:<positive duration>",
		"8080=after:20": "want after:<positive duration>",
	} {
		if _, err := parsePort(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: want an error containing %q, got %v", in, want, err)
		}
	}
	if _, err := parseTermMode("drain"); err == nil {
		t.Errorf("--on-term drain accepted")
	}
}
