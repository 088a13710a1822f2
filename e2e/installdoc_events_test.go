package e2e

// What docs/install.md says Metacontroller posts on the chart's
// CompositeController, checked against Metacontroller v4.17.2's source in
// shared/vendor/. This file has no build tag: it runs in `make test`,
// without a cluster, so framework/installdoc_events.go has none either.

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackdome/stackdome/e2e/framework"
)

// TestInstallDocEvents: the table of docs/install.md's framework.EventsSection lists
// exactly the events Metacontroller v4.17.2 posts on a CompositeController
// (every Eventf on one in pkg/controller/composite/, its type, reason and
// message), the page's field selectors name only reasons it posts, and the
// discovery interval the page quotes is the production manifests'. The page
// once said "none expected": Metacontroller posts Starting and Started on
// every CompositeController, and a CreateError is likely right after helm
// install.
func TestInstallDocEvents(t *testing.T) {
	src := framework.MetacontrollerSource(t, "pkg/events/", "pkg/controller/composite/controller.go",
		"pkg/controller/composite/metacontroller.go", "manifests/production/metacontroller.yaml")
	posted, err := framework.CompositeControllerEvents(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(posted) == 0 {
		t.Fatal("no event on a CompositeController found in Metacontroller's source: the reader is broken")
	}
	doc, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(framework.InstallDoc)))
	if err != nil {
		t.Fatal(err)
	}
	page, err := framework.PageEvents(doc)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(posted, page); d != "" {
		t.Errorf("%s, %q: the events it lists are not those Metacontroller v4.17.2 posts on a CompositeController (-source +page):\n%s", framework.InstallDoc, framework.EventsSection, d)
	}

	reasons := map[string]bool{}
	for _, e := range posted {
		reasons[e.Reason] = true
	}
	selectors := regexp.MustCompile(`--field-selector[= ]([^ ]*involvedObject\.kind=CompositeController[^ ]*)`).FindAllStringSubmatch(string(doc), -1)
	if len(selectors) == 0 {
		t.Errorf("%s: no command lists the CompositeController's events", framework.InstallDoc)
	}
	for _, m := range selectors {
		for _, term := range strings.Split(m[1], ",") {
			if r, ok := strings.CutPrefix(term, "reason="); ok && !reasons[r] {
				t.Errorf("%s: --field-selector %s asks for reason %s, which Metacontroller never posts on a CompositeController", framework.InstallDoc, m[1], r)
			}
		}
	}

	interval := regexp.MustCompile(`--discovery-interval=[0-9a-z]+`).Find(src["manifests/production/metacontroller.yaml"])
	if interval == nil {
		t.Fatal("manifests/production/metacontroller.yaml sets no --discovery-interval")
	}
	if !strings.Contains(framework.StepSection(doc, framework.EventsSection), "`"+string(interval)+"`") {
		t.Errorf("%s, %q, does not quote the production manifests' %s, the wait before a CreateError is a problem", framework.InstallDoc, framework.EventsSection, interval)
	}
}

// TestInstallDocEventsBite: the page's old wording fails the check.
func TestInstallDocEventsBite(t *testing.T) {
	old := framework.EventsSection + "\n\n<!-- e2e: run -->\n```sh\nkubectl get events -A --field-selector involvedObject.kind=CompositeController   # none expected\n```\n"
	if _, err := framework.PageEvents([]byte(old)); err == nil {
		t.Error("a section without the table of events passed")
	}
	src := framework.MetacontrollerSource(t, "pkg/events/", "pkg/controller/composite/controller.go", "pkg/controller/composite/metacontroller.go")
	posted, err := framework.CompositeControllerEvents(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []framework.MCEvent{
		{Type: "Normal", Reason: "Starting", Message: "Starting controller: …"},
		{Type: "Normal", Reason: "Started", Message: "Started controller: …"},
		{Type: "Warning", Reason: "CreateError", Message: "Cannot create new controller: …"},
	} {
		if !slices.Contains(posted, want) {
			t.Errorf("the source reader misses %s; it read %v", want, posted)
		}
	}
}
