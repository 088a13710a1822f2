package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestOneVersion: the chart's appVersion is the one version. The chart's
// own version, the version a plain go build of stackdome reports (version
// in version.go) and the newest release of CHANGELOG.md are it; make's
// VERSION defaults to it (and can be overridden), the tarball's tag is it
// (TestMakeImage), and every image reference with a tag in the docs uses
// it, so that what the docs build, push and load is what the chart pulls
// and what the binary says it is.
func TestOneVersion(t *testing.T) {
	appVersion := chartAppVersion(t)
	others := map[string]string{
		"chart/Chart.yaml version":      chartField(t, "version"),
		"version.go version":            binaryVersion(t),
		"CHANGELOG.md's newest release": changelog(t)[0].version,
	}
	for what, v := range others {
		if v != appVersion {
			t.Errorf("%s is %q, the chart's appVersion %q: a release changes them together", what, v, appVersion)
		}
	}
	if got, stderr, err := runMake(t, nil, "version"); err != nil || strings.TrimSpace(got) != appVersion {
		t.Errorf("make version = %q (%v %s), want the chart's appVersion %q", got, err, stderr, appVersion)
	}
	if got, _, err := runMake(t, nil, "version", "VERSION=0.3.0-rc.1"); err != nil || strings.TrimSpace(got) != "0.3.0-rc.1" {
		t.Errorf("make version VERSION=0.3.0-rc.1 = %q (%v)", got, err)
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

// chartField is a top-level string field of chart/Chart.yaml.
func chartField(t *testing.T, name string) string {
	t.Helper()
	for _, line := range readLines(t, "chart/Chart.yaml") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	t.Fatalf("chart/Chart.yaml has no %s", name)
	return ""
}

// binaryVersion is the value of `var version = "…"` in the main package's
// version.go: what stackdome reports when nothing is linked in.
func binaryVersion(t *testing.T) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(repoRoot, "version.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok {
			continue
		}
		for _, spec := range g.Specs {
			v, ok := spec.(*ast.ValueSpec)
			if !ok || len(v.Names) != 1 || v.Names[0].Name != "version" || len(v.Values) != 1 {
				continue
			}
			if lit, ok := v.Values[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
		}
	}
	t.Fatal(`version.go has no var version = "…"`)
	return ""
}
