package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// citesOutside are references to files outside the repository: the team's
// notes beside a checkout (DESIGN.md, STYLE.md, reference/*.md and its
// sections). A reader of the published repository cannot follow them, so a
// fact taken from one is stated where it is used, with its upstream source
// (a file of Metacontroller, Traefik or Kubernetes at a tag), or dropped.
// No file may hold one.
var citesOutside = regexp.MustCompile(`\b(?:DESIGN|STYLE)\.md\b` +
	`|\b(?:metacontroller|readiness|traefik-errorpages|traefik-build)\.md\b` +
	`|\breference §` +
	`|\bshared/reference\b`)

// namesSharedInput is a path into the shared folder beside a checkout
// (../shared, shared/vendor/, shared/testdata/, "a shared/ checkout"). Only
// tests that read their inputs from there (STACKDOME_SHARED) may name it,
// and the page that says how to supply them: sharedInputFiles.
var namesSharedInput = regexp.MustCompile(`\.\./shared\b|\bshared/`)

// sharedInputFiles read ../shared/vendor or ../shared/testdata at test time
// (STACKDOME_SHARED), or document how to supply them; nothing else may name
// the folder.
var sharedInputFiles = []string{
	"chart/crdschema_test.go",                   // Metacontroller's CRDs from shared/testdata
	"docs/e2e.md",                               // STACKDOME_SHARED and what the suite reads there
	"e2e/chart_test.go",                         // the real CRDs when shared/ is there
	"e2e/installdoc_events_test.go",             // Metacontroller's source from shared/vendor
	"e2e/installdoc_traefik_test.go",            // the Traefik chart from shared/vendor
	"e2e/mccrds_test.go",                        // the real CRDs
	"e2e/metacontroller/build.sh",               // Metacontroller's source from shared/vendor
	"e2e/framework/crdschema.go",                // the real CRDs when shared/ is there
	"e2e/framework/fixture.go",                  // Fixture.Shared
	"e2e/framework/installdoc_events.go",        // Metacontroller's source from shared/vendor
	"e2e/framework/installdoc_traefik.go",       // the Traefik chart from shared/vendor
	"e2e/framework/metacontroller.go",           // Metacontroller's source, or METACONTROLLER_SRC
	"e2e/framework/traefikchart.go",             // the Traefik chart from shared/vendor
	"e2e/framework/vendor.go",                   // SharedDir, VendorArchive
	"Makefile",                                  // make e2e's check for that source
	"e2e/testdata/compositecontroller-crd.yaml", // stands in when ../shared is absent
	"metacontroller/wire_test.go",               // the recorded requests in shared/testdata
}

// standaloneScanned is what the check reads: docs, READMEs, Go source
// (comments included), scripts and manifests; no other kind of file.
func standaloneScanned(path string) bool {
	switch filepath.Base(path) {
	case "Makefile", "Dockerfile", "run":
		return true
	}
	switch filepath.Ext(path) {
	case ".go", ".md", ".sh", ".yaml", ".yml", ".tpl", ".txt":
		return true
	}
	return false
}

// outsideRefs returns, per file of the tree at root, each line that cites
// a file outside the repository, or names the shared folder from a file
// not in sharedInputFiles, as "path:line: text".
func outsideRefs(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") && d.Name() != ".ci" || rel == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !standaloneScanned(rel) || rel == "docs_standalone_test.go" { // its own examples
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		inputOK := slices.Contains(sharedInputFiles, rel)
		for i, line := range strings.Split(string(data), "\n") {
			if citesOutside.MatchString(line) || !inputOK && namesSharedInput.MatchString(line) {
				found = append(found, rel+":"+strconv.Itoa(i+1)+": "+strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestDocsStandAlone: no doc, comment, script or manifest of the repository
// points at a file outside it, except the tests that read their inputs
// from the shared folder (sharedInputFiles), and every file on that list
// exists and still names the folder.
func TestDocsStandAlone(t *testing.T) {
	for _, f := range outsideRefs(t, ".") {
		t.Errorf("%s\n\tcites a file outside the repository: state the fact here with its upstream source (e.g. metacontroller/metacontroller@v4.17.2 pkg/controller/composite/controller.go), or drop it", f)
	}
	for _, f := range sharedInputFiles { // the list holds only what needs it
		data, err := os.ReadFile(f)
		switch {
		case err != nil:
			t.Errorf("sharedInputFiles names %s: %v", f, err)
		case !namesSharedInput.Match(data):
			t.Errorf("sharedInputFiles names %s, which no longer names the shared folder: drop it from the list", f)
		}
	}
}

// TestOutsideRefsBites: the check finds each kind of reference it must
// refuse, and lets through what it must (an RFC's section, docs/design.md,
// Traefik's own docs/content/reference path, a shared folder named by an
// allowed test).
func TestOutsideRefsBites(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/a.md", "ok: docs/design.md and RFC 9110 §5.3\n"+
		"bad: (shared/DESIGN.md, \"Error pages\")\n"+
		"bad: (reference/metacontroller.md §17)\n"+
		"bad: (reference §2)\n"+
		"bad: see ../shared/reference/traefik-build.md\n"+
		"bad: `shared/testdata/x.json`\n"+
		"ok: docs/content/reference/dynamic-configuration/kubernetes-crd-definition-v1.yml\n")
	write("x.go", "// bad: STYLE.md says so\n// ok: 2 shared cores\n")
	write("e2e/framework/vendor.go", "// ok: the archives in shared/vendor/\n// bad: traefik-errorpages.md §2.3\n")
	write("notes.py", "# skipped: ../shared/testdata\n")
	write(".git/x.md", "skipped: DESIGN.md\n")
	got := outsideRefs(t, root)
	want := []string{
		"docs/a.md:2: bad: (shared/DESIGN.md, \"Error pages\")",
		"docs/a.md:3: bad: (reference/metacontroller.md §17)",
		"docs/a.md:4: bad: (reference §2)",
		"docs/a.md:5: bad: see ../shared/reference/traefik-build.md",
		"docs/a.md:6: bad: `shared/testdata/x.json`",
		"e2e/framework/vendor.go:2: // bad: traefik-errorpages.md §2.3",
		"x.go:1: // bad: STYLE.md says so",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outsideRefs (-want +got):\n%s", diff)
	}
}
