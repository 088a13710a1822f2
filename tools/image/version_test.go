package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOneVersion: the chart's appVersion is the one version. make's
// VERSION defaults to it (and can be overridden), the tarball's tag is it
// (TestMakeImage), and every image reference with a tag in the docs uses
// it, so that what the docs build, push and load is what the chart pulls.
func TestOneVersion(t *testing.T) {
	appVersion := chartAppVersion(t)
	if got, stderr, err := runMake(t, nil, "version"); err != nil || strings.TrimSpace(got) != appVersion {
		t.Errorf("make version = %q (%v %s), want the chart's appVersion %q", got, err, stderr, appVersion)
	}
	if got, _, err := runMake(t, nil, "version", "VERSION=0.2.0-rc.1"); err != nil || strings.TrimSpace(got) != "0.2.0-rc.1" {
		t.Errorf("make version VERSION=0.2.0-rc.1 = %q (%v)", got, err)
	}

	// A tagged stackdome image reference, …stackdome:<tag> in prose or code,
	// the tag in the characters a tag may hold (a sentence's full stop cut).
	tagged := regexp.MustCompile(`stackdome:(v?[0-9][\w.-]*)`)
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, path := range append(docs, filepath.Join(repoRoot, "README.md")) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range tagged.FindAllStringSubmatch(line, -1) {
				seen++
				if tag := strings.TrimRight(m[1], "."); tag != appVersion {
					rel, _ := filepath.Rel(repoRoot, path)
					t.Errorf("%s:%d: %q tags the image %s; the chart's appVersion is %s", rel, i+1, m[0], tag, appVersion)
				}
			}
		}
	}
	if seen == 0 {
		t.Errorf("no doc names a tagged stackdome image: docs/operations.md should say how to push and load one")
	}
}
