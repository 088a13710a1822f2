package main

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestDockerfileVersion: every stage of the Dockerfile defaults VERSION to
// the chart's appVersion, so that `docker build .` without build arguments
// labels and tags what make image does (TestOneVersion holds the rest).
func TestDockerfileVersion(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	appVersion := chartAppVersion(t)
	args := regexp.MustCompile(`(?m)^ARG VERSION(=.*)?$`).FindAllStringSubmatch(string(b), -1)
	if len(args) == 0 {
		t.Fatal("the Dockerfile has no ARG VERSION")
	}
	for _, a := range args {
		if a[1] != "="+appVersion {
			t.Errorf("Dockerfile: %q, want ARG VERSION=%s (the chart's appVersion)", a[0], appVersion)
		}
	}
}
