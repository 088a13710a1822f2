// No build tag: TestInstallDocEvents runs in `make test`, without a cluster.

package framework

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// What docs/install.md says Metacontroller posts on the chart's
// CompositeController, and what Metacontroller v4.17.2's source in
// shared/vendor/ posts.

// MCEvent is one event Metacontroller posts: its type, reason and message
// with each formatted value written as "…".
type MCEvent struct{ Type, Reason, Message string }

// EventsSection is the heading of docs/install.md's section on the events
// Metacontroller posts on the chart's CompositeController.
const EventsSection = "## Is Metacontroller running it?"

// MetacontrollerSource reads files of the pinned Metacontroller tree: each
// name is a file, or a directory when it ends in "/".
func MetacontrollerSource(t *testing.T, names ...string) map[string][]byte {
	t.Helper()
	files, err := ReadArchive(VendorArchive(t, MetacontrollerArchive), "metacontroller-4.17.2", func(rel string) bool {
		for _, n := range names {
			if rel == n || (strings.HasSuffix(n, "/") && strings.HasPrefix(rel, n) && !strings.Contains(rel[len(n):], "/") && !strings.HasSuffix(rel, "_test.go")) {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if _, ok := files[n]; !ok && !strings.HasSuffix(n, "/") {
			t.Fatalf("%s has no %s", MetacontrollerArchive, n)
		}
	}
	return files
}

// CompositeControllerEvents reads, from Metacontroller's source, every
// eventRecorder.Eventf whose object is the CompositeController (cc, &cc,
// pc.cc) in pkg/controller/composite/, with its type (v1.EventTypeNormal,
// v1.EventTypeWarning), its reason (a constant of pkg/events) and its
// format, each verb written as "…". Sorted, without duplicates.
func CompositeControllerEvents(src map[string][]byte) ([]MCEvent, error) {
	fset := token.NewFileSet()
	reasons := map[string]string{}
	var calls []*ast.CallExpr
	for name, data := range src {
		if !strings.HasSuffix(name, ".go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, data, 0)
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(name, "pkg/events/") {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				for _, s := range g.Specs {
					v := s.(*ast.ValueSpec)
					for i, n := range v.Names {
						if lit, ok := v.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							reasons[n.Name], _ = strconv.Unquote(lit.Value)
						}
					}
				}
			}
			continue
		}
		if !strings.HasPrefix(name, "pkg/controller/composite/") {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Eventf" && len(c.Args) >= 4 {
					calls = append(calls, c)
				}
			}
			return true
		})
	}
	verb := regexp.MustCompile(`%[-+# 0-9.]*[a-zA-Z]`)
	var out []MCEvent
	for _, c := range calls {
		Obj := exprString(c.Args[0])
		if Obj != "cc" && Obj != "&cc" && Obj != "pc.cc" {
			continue // an event on a parent
		}
		typ := strings.TrimPrefix(exprString(c.Args[1]), "v1.EventType")
		reason, ok := reasons[strings.TrimPrefix(exprString(c.Args[2]), "events.")]
		lit, isLit := c.Args[3].(*ast.BasicLit)
		if !ok || !isLit || (typ != "Normal" && typ != "Warning") {
			return nil, fmt.Errorf("%s: an Eventf this reader cannot read: %s, %s, %s", fset.Position(c.Pos()), exprString(c.Args[1]), exprString(c.Args[2]), exprString(c.Args[3]))
		}
		format, _ := strconv.Unquote(lit.Value)
		e := MCEvent{Type: typ, Reason: reason, Message: verb.ReplaceAllString(format, "…")}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	SortEvents(out)
	return out, nil
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.UnaryExpr:
		return e.Op.String() + exprString(e.X)
	case *ast.BasicLit:
		return e.Value
	}
	return fmt.Sprintf("%T", e)
}

func SortEvents(es []MCEvent) {
	slices.SortFunc(es, func(a, b MCEvent) int { return strings.Compare(a.String(), b.String()) })
}

// PageEvents reads the table of events in the page's EventsSection: rows
// "| Normal `Reason` | `message` | … |".
func PageEvents(doc []byte) ([]MCEvent, error) {
	sec := StepSection(doc, EventsSection)
	row := regexp.MustCompile("(?m)^\\| (Normal|Warning) `([A-Za-z]+)` \\| `([^`]+)` \\|")
	var out []MCEvent
	for _, m := range row.FindAllStringSubmatch(sec, -1) {
		out = append(out, MCEvent{Type: m[1], Reason: m[2], Message: m[3]})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s, %q, has no table of the events Metacontroller posts on the CompositeController (rows \"| Normal `Reason` | `message` | what it means |\")", InstallDoc, EventsSection)
	}
	SortEvents(out)
	return out, nil
}

// StepSection is the page from the heading that starts with heading to the
// next heading of the same level.
func StepSection(doc []byte, heading string) string {
	s := string(doc)
	i := strings.Index(s, "\n"+heading)
	if i < 0 {
		return ""
	}
	s = s[i+1:]
	level := heading[:strings.IndexByte(heading, ' ')+1]
	if j := strings.Index(s[1:], "\n"+level); j >= 0 {
		s = s[:j+1]
	}
	return s
}

func (e MCEvent) String() string { return e.Type + " " + e.Reason + " " + strconv.Quote(e.Message) }
