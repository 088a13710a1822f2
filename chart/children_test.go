package chart

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/stackdome/stackdome/hooks"
)

// Metacontroller watches, updates and deletes only the kinds the
// CompositeController lists: an unlisted child would be created once and then
// never updated or deleted. So the chart must register exactly the kinds
// hooks.Sync returns, each with updateStrategy InPlace but Jobs (OnDelete).

// registeredChildren returns "<apiVersion> <resource>" of every childResources
// rule of the default render, failing on any method other than InPlace
// (OnDelete for Jobs).
func registeredChildren(t *testing.T) []string {
	t.Helper()
	cc := find[*compositeController](t, decode(t, render(t, install{})), "CompositeController")
	var got []string
	for _, c := range cc.Spec.ChildResources {
		want := "InPlace"
		if c.APIVersion == "batch/v1" && c.Resource == "jobs" {
			// A Job is never updated: its name carries its revision, and
			// its pod template is immutable (docs/reference.md, Children).
			want = "OnDelete"
		}
		if c.UpdateStrategy.Method != want {
			t.Errorf("%s %s: updateStrategy %q, want %s", c.APIVersion, c.Resource, c.UpdateStrategy.Method, want)
		}
		got = append(got, c.APIVersion+" "+c.Resource)
	}
	slices.Sort(got)
	return got
}

// syncGoldens is where hooks keeps its golden sync requests and responses.
var syncGoldens = filepath.Join(repoRoot, "testdata", "sync")

// TestChildResourcesAreWhatSyncReturns compares the registered kinds with the
// children of every golden sync response: what Sync provably returns.
func TestChildResourcesAreWhatSyncReturns(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(syncGoldens, "*.response.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		missing(t, "no golden sync responses in testdata/sync")
	}
	seen := map[string][]string{} // "<apiVersion> <resource>" → golden files returning it
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var resp struct {
			Children []struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
			} `json:"children"`
		}
		if err := json.Unmarshal(data, &resp); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range resp.Children {
			// The plural Metacontroller itself falls back to; the test below
			// checks it against hooks.ChildResources' explicit plurals.
			plural, _ := meta.UnsafeGuessKindToResource(schema.FromAPIVersionAndKind(c.APIVersion, c.Kind))
			key := c.APIVersion + " " + plural.Resource
			seen[key] = append(seen[key], filepath.Base(f))
		}
	}
	var returned []string
	for k := range seen {
		returned = append(returned, k)
	}
	slices.Sort(returned)
	if diff := cmp.Diff(returned, registeredChildren(t)); diff != "" {
		t.Errorf("childResources (-returned by Sync in testdata/sync +registered by the chart):\n%s\n"+
			"a kind only registered needs a golden case that returns it, or must go from the chart", diff)
	}
}

// TestChildResourcesAreHooksChildResources compares the registered kinds with
// the list the hooks package declares.
func TestChildResourcesAreHooksChildResources(t *testing.T) {
	var declared []string
	for _, c := range hooks.ChildResources {
		plural, _ := meta.UnsafeGuessKindToResource(schema.FromAPIVersionAndKind(c.APIVersion, c.Kind))
		if plural.Resource != c.Resource {
			t.Errorf("hooks.ChildResources: %s %s has resource %q, Metacontroller guesses %q", c.APIVersion, c.Kind, c.Resource, plural.Resource)
		}
		declared = append(declared, c.APIVersion+" "+c.Resource)
	}
	slices.Sort(declared)
	if diff := cmp.Diff(declared, registeredChildren(t)); diff != "" {
		t.Errorf("childResources (-hooks.ChildResources +chart):\n%s", diff)
	}
}
