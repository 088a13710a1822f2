package hooks

import (
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/stackdome/stackdome/"

// rooms are the packages of the sync pipeline and what each may import of
// this module: the import graph of docs/design.md ("The sync pipeline").
// children and status never import each other, so what is built and how
// health is decided cannot leak into one another; observed imports neither.
var rooms = map[string][]string{
	"hooks/internal/observed": {"metacontroller", "schema"},
	"hooks/internal/children": {"hooks/internal/observed", "schema"},
	"hooks/internal/status":   {"hooks/internal/observed", "portcheck", "schema"},
}

// httpFiles are the files of package hooks that speak HTTP: the handler
// (its sync path, its customize path and its refusals), the router and the
// body reader. Nothing else of the pipeline imports
// net/http — not Sync's file, not a room: HTTP status codes are chosen in
// the handler from the errors' kinds.
var httpFiles = []string{"handler.go", "customizehandler.go", "refuse.go", "router.go", "body.go"}

// imports returns what the non-test Go files at path (a package directory
// or one file, relative to the repository root) import.
func imports(t *testing.T, path string) map[string][]string {
	t.Helper()
	root := filepath.Join("..", filepath.FromSlash(path))
	files := []string{root}
	if fi, err := os.Stat(root); err != nil {
		t.Fatal(err)
	} else if fi.IsDir() {
		files, err = filepath.Glob(filepath.Join(root, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
	}
	out := map[string][]string{} // import path → files importing it
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range file.Imports {
			p, _ := strconv.Unquote(spec.Path.Value)
			out[p] = append(out[p], filepath.Base(f))
		}
	}
	return out
}

// TestRoomsImportOneWay fails when a package of the pipeline imports more
// of this module than its room allows — children importing status or the
// other way round above all — directly or through another package.
func TestRoomsImportOneWay(t *testing.T) {
	for room, allowed := range rooms {
		for dep, files := range imports(t, room) {
			own, ok := strings.CutPrefix(dep, module)
			if ok && !slices.Contains(allowed, own) {
				t.Errorf("%s imports %s (%s); it may import only %v of this module", room, own, strings.Join(files, ", "), allowed)
			}
		}
	}
	// Through another package: what a room may reach, transitively.
	reach := func(from string) map[string]bool {
		seen := map[string]bool{}
		var walk func(string)
		walk = func(p string) {
			for dep := range imports(t, p) {
				if own, ok := strings.CutPrefix(dep, module); ok && !seen[own] {
					seen[own] = true
					walk(own)
				}
			}
		}
		walk(from)
		return seen
	}
	for a, b := range map[string]string{"hooks/internal/children": "hooks/internal/status", "hooks/internal/status": "hooks/internal/children"} {
		if reach(a)[b] {
			t.Errorf("%s reaches %s: children and status must never import each other", a, b)
		}
	}
}

// TestPipelineImportsNoHTTP fails when a room, or a file of package hooks
// other than httpFiles, imports net/http.
func TestPipelineImportsNoHTTP(t *testing.T) {
	paths := slices.Sorted(maps.Keys(rooms))
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") && !slices.Contains(httpFiles, f) {
			paths = append(paths, "hooks/"+f)
		}
	}
	for _, p := range paths {
		for dep, files := range imports(t, p) {
			if dep == "net/http" || strings.HasPrefix(dep, "net/http/") {
				t.Errorf("%s imports %s (%s): HTTP belongs to the handler", p, dep, strings.Join(files, ", "))
			}
		}
	}
}
