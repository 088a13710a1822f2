package portcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestNewDefaultsAreDefaultConfig: New fills every zero field of its Config
// from DefaultConfig, the one statement of the defaults, and keeps every
// field that is set.
func TestNewDefaultsAreDefaultConfig(t *testing.T) {
	if diff := cmp.Diff(DefaultConfig(), New(Config{}).cfg); diff != "" {
		t.Errorf("New(Config{}) defaults (-DefaultConfig +New):\n%s", diff)
	}
	set := Config{Workers: 1, PerJob: 2, QueueSize: 3, DialTimeout: time.Millisecond, Recheck: time.Second, TTL: time.Minute, Backoff: time.Hour, MaxEntries: 4}
	if diff := cmp.Diff(set, New(set).cfg); diff != "" {
		t.Errorf("New kept (-set +New):\n%s", diff)
	}
}

// TestNoFlagInLibraryText: portcheck is a library; what it says (errors,
// Inconclusive reasons, metric help) names its own Config, never a flag of
// the program that happens to configure it. Every string literal of the
// package's source is read.
func TestNoFlagInLibraryText(t *testing.T) {
	flagName := regexp.MustCompile(`(^|[^-\w])--[a-z]`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && flagName.MatchString(lit.Value) {
				t.Errorf("%s: %s names a command-line flag", fset.Position(lit.Pos()), lit.Value)
			}
			return true
		})
	}
}
