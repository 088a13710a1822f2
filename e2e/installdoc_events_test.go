package e2e

// What docs/install.md says Metacontroller posts on the chart's
// CompositeController, checked against Metacontroller v4.17.2's source in
// shared/vendor/. This file has no build tag: it runs in `make test`,
// without a cluster.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mcEvent is one event Metacontroller posts: its type, reason and message
// with each formatted value written as "…".
type mcEvent struct{ Type, Reason, Message string }

func (e mcEvent) String() string { return e.Type + " " + e.Reason + " " + strconv.Quote(e.Message) }

// eventsSection is the heading of docs/install.md's section on the events
// Metacontroller posts on the chart's CompositeController.
const eventsSection = "## Is Metacontroller running it?"

// TestInstallDocEvents: the table of docs/install.md's eventsSection lists
// exactly the events Metacontroller v4.17.2 posts on a CompositeController
// (every Eventf on one in pkg/controller/composite/, its type, reason and
// message), the page's field selectors name only reasons it posts, and the
// discovery interval the page quotes is the production manifests'. The page
// once said "none expected": Metacontroller posts Starting and Started on
// every CompositeController, and a CreateError is likely right after helm
// install.
func TestInstallDocEvents(t *testing.T) {
	src := metacontrollerSource(t, "pkg/events/", "pkg/controller/composite/controller.go",
		"pkg/controller/composite/metacontroller.go", "manifests/production/metacontroller.yaml")
	posted, err := compositeControllerEvents(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(posted) == 0 {
		t.Fatal("no event on a CompositeController found in Metacontroller's source: the reader is broken")
	}
	doc, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(installDoc)))
	if err != nil {
		t.Fatal(err)
	}
	page, err := pageEvents(doc)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(posted, page); d != "" {
		t.Errorf("%s, %q: the events it lists are not those Metacontroller v4.17.2 posts on a CompositeController (-source +page):\n%s", installDoc, eventsSection, d)
	}

	reasons := map[string]bool{}
	for _, e := range posted {
		reasons[e.Reason] = true
	}
	selectors := regexp.MustCompile(`--field-selector[= ]([^ ]*involvedObject\.kind=CompositeController[^ ]*)`).FindAllStringSubmatch(string(doc), -1)
	if len(selectors) == 0 {
		t.Errorf("%s: no command lists the CompositeController's events", installDoc)
	}
	for _, m := range selectors {
		for _, term := range strings.Split(m[1], ",") {
			if r, ok := strings.CutPrefix(term, "reason="); ok && !reasons[r] {
				t.Errorf("%s: --field-selector %s asks for reason %s, which Metacontroller never posts on a CompositeController", installDoc, m[1], r)
			}
		}
	}

	interval := regexp.MustCompile(`--discovery-interval=[0-9a-z]+`).Find(src["manifests/production/metacontroller.yaml"])
	if interval == nil {
		t.Fatal("manifests/production/metacontroller.yaml sets no --discovery-interval")
	}
	if !strings.Contains(stepSection(doc, eventsSection), "`"+string(interval)+"`") {
		t.Errorf("%s, %q, does not quote the production manifests' %s, the wait before a CreateError is a problem", installDoc, eventsSection, interval)
	}
}

// TestInstallDocEventsBite: the page's old wording fails the check.
func TestInstallDocEventsBite(t *testing.T) {
	old := eventsSection + "\n\n<!-- e2e: run -->\n```sh\nkubectl get events -A --field-selector involvedObject.kind=CompositeController   # none expected\n```\n"
	if _, err := pageEvents([]byte(old)); err == nil {
		t.Error("a section without the table of events passed")
	}
	src := metacontrollerSource(t, "pkg/events/", "pkg/controller/composite/controller.go", "pkg/controller/composite/metacontroller.go")
	posted, err := compositeControllerEvents(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []mcEvent{
		{"Normal", "Starting", "Starting controller: …"},
		{"Normal", "Started", "Started controller: …"},
		{"Warning", "CreateError", "Cannot create new controller: …"},
	} {
		if !slices.Contains(posted, want) {
			t.Errorf("the source reader misses %s; it read %v", want, posted)
		}
	}
}

// metacontrollerSource reads files of the pinned Metacontroller tree: each
// name is a file, or a directory when it ends in "/".
func metacontrollerSource(t *testing.T, names ...string) map[string][]byte {
	t.Helper()
	files, err := readArchive(vendorArchive(t, metacontrollerArchive), "metacontroller-4.17.2", func(rel string) bool {
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
			t.Fatalf("%s has no %s", metacontrollerArchive, n)
		}
	}
	return files
}

// compositeControllerEvents reads, from Metacontroller's source, every
// eventRecorder.Eventf whose object is the CompositeController (cc, &cc,
// pc.cc) in pkg/controller/composite/, with its type (v1.EventTypeNormal,
// v1.EventTypeWarning), its reason (a constant of pkg/events) and its
// format, each verb written as "…". Sorted, without duplicates.
func compositeControllerEvents(src map[string][]byte) ([]mcEvent, error) {
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
	var out []mcEvent
	for _, c := range calls {
		obj := exprString(c.Args[0])
		if obj != "cc" && obj != "&cc" && obj != "pc.cc" {
			continue // an event on a parent
		}
		typ := strings.TrimPrefix(exprString(c.Args[1]), "v1.EventType")
		reason, ok := reasons[strings.TrimPrefix(exprString(c.Args[2]), "events.")]
		lit, isLit := c.Args[3].(*ast.BasicLit)
		if !ok || !isLit || (typ != "Normal" && typ != "Warning") {
			return nil, fmt.Errorf("%s: an Eventf this reader cannot read: %s, %s, %s", fset.Position(c.Pos()), exprString(c.Args[1]), exprString(c.Args[2]), exprString(c.Args[3]))
		}
		format, _ := strconv.Unquote(lit.Value)
		e := mcEvent{Type: typ, Reason: reason, Message: verb.ReplaceAllString(format, "…")}
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	sortEvents(out)
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

func sortEvents(es []mcEvent) {
	slices.SortFunc(es, func(a, b mcEvent) int { return strings.Compare(a.String(), b.String()) })
}

// pageEvents reads the table of events in the page's eventsSection: rows
// "| Normal `Reason` | `message` | … |".
func pageEvents(doc []byte) ([]mcEvent, error) {
	sec := stepSection(doc, eventsSection)
	row := regexp.MustCompile("(?m)^\\| (Normal|Warning) `([A-Za-z]+)` \\| `([^`]+)` \\|")
	var out []mcEvent
	for _, m := range row.FindAllStringSubmatch(sec, -1) {
		out = append(out, mcEvent{Type: m[1], Reason: m[2], Message: m[3]})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s, %q, has no table of the events Metacontroller posts on the CompositeController (rows \"| Normal `Reason` | `message` | what it means |\")", installDoc, eventsSection)
	}
	sortEvents(out)
	return out, nil
}

// stepSection is the page from the heading that starts with heading to the
// next heading of the same level.
func stepSection(doc []byte, heading string) string {
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
