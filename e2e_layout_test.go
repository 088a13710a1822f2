package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// e2eTestDirs are the e2e suites: their test files hold tests, and what
// more than one file needs lives in e2e/framework.
var e2eTestDirs = []string{"e2e", "e2e/node"}

// testFileLayout returns what breaks the e2e suites' layout in the test
// files of dir (build tags ignored), as "file: problem":
//   - a test file (but main_test.go, which holds TestMain) declares no
//     Test, Benchmark or Fuzz function;
//   - a function, type, variable or constant one test file declares at
//     the top level is used by another: a helper that several files share
//     belongs in e2e/framework, one concern a file. main_test.go is the
//     package's entry: it holds TestMain and the package's shorthands
//     (type aliases), which every file may use, and nothing else.
//
// Uses across files are the identifiers each file leaves unresolved
// (go/parser resolves a file's own and local names), so a local variable
// that happens to share a top-level name elsewhere is not counted.
func testFileLayout(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	declaredIn := map[string]string{} // top-level name → its file
	files := map[string]*ast.File{}
	var problems []string
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(p)
		files[name] = f
		tests := 0
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil {
					continue
				}
				n := d.Name.Name
				if strings.HasPrefix(n, "Test") || strings.HasPrefix(n, "Benchmark") || strings.HasPrefix(n, "Fuzz") {
					tests++
					continue
				}
				if name == "main_test.go" {
					problems = append(problems, name+": declares "+n+": it holds TestMain and type aliases only")
				}
				declaredIn[n] = name
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if name == "main_test.go" && s.Assign.IsValid() {
							continue // a shorthand for the whole package
						}
						if name == "main_test.go" {
							problems = append(problems, name+": declares "+s.Name.Name+": it holds TestMain and type aliases only")
						}
						declaredIn[s.Name.Name] = name
					case *ast.ValueSpec:
						for _, id := range s.Names {
							if name == "main_test.go" {
								problems = append(problems, name+": declares "+id.Name+": it holds TestMain and type aliases only")
							}
							declaredIn[id.Name] = name
						}
					}
				}
			}
		}
		if tests == 0 && name != "main_test.go" {
			problems = append(problems, name+": holds no test")
		}
	}
	for name, f := range files {
		seen := map[string]bool{}
		for _, id := range f.Unresolved {
			if from, ok := declaredIn[id.Name]; ok && from != name && !seen[id.Name] {
				seen[id.Name] = true
				problems = append(problems, name+": uses "+id.Name+", declared in "+from)
			}
		}
	}
	sort.Strings(problems)
	return problems
}

// TestE2ETestFilesHoldTests: every test file of the e2e suites holds a
// test, and no test file leans on another's helpers.
func TestE2ETestFilesHoldTests(t *testing.T) {
	for _, dir := range e2eTestDirs {
		for _, p := range testFileLayout(t, dir) {
			t.Errorf("%s/%s", dir, p)
		}
	}
}

// TestTestFileLayoutBites: the check finds a file without a test, a helper
// used across files and state in main_test.go, and lets through a local
// variable named as another file's helper and main_test.go's shorthand.
func TestTestFileLayoutBites(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte("package x\n\n"+text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("main_test.go", "import \"testing\"\n\nfunc TestMain(m *testing.M) {}\n\ntype obj = map[string]any\n\nvar state int\n")
	write("a_test.go", "import \"testing\"\n\nfunc TestA(t *testing.T) { helper(); _ = shared{}; _ = obj{} }\n\nfunc at() {}\n")
	write("b_test.go", "import \"testing\"\n\nfunc TestB(t *testing.T) { at := 1; _ = at }\n\nfunc helper() {}\n")
	write("c_test.go", "type shared struct{}\n")
	got := testFileLayout(t, dir)
	want := []string{
		"a_test.go: uses helper, declared in b_test.go",
		"a_test.go: uses shared, declared in c_test.go",
		"c_test.go: holds no test",
		"main_test.go: declares state: it holds TestMain and type aliases only",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("testFileLayout (-want +got):\n%s", diff)
	}
}
