package installdoc

import (
	"strings"
	"testing"
)

// TestChecksBite: the checks fail on what they are for.
func TestChecksBite(t *testing.T) {
	doc := "x\n<!-- e2e: run -->\n```sh\necho a\n```\n\n```sh\necho unmarked\n```\n" +
		"<!-- e2e: substituted -->\n```sh\nkind create cluster --name other\n```\n" +
		"<!-- e2e:run -->\n```yaml\na: b\n```\n"
	blocks, errs := Parse([]byte(doc))
	if len(blocks) != 2 || blocks[0].Text != "echo a" || blocks[1].Marker != "substituted" {
		t.Errorf("blocks %+v", blocks)
	}
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "without a marker") || !strings.Contains(errs[1].Error(), "malformed") {
		t.Errorf("parse errors %v, want an unmarked block and a malformed marker", errs)
	}
	subs := []Substitution{{Doc: "echo a", Why: "x"}, {Doc: "gone", Why: "y"}}
	_, errs = Plan(blocks, subs)
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"marked run, but it is a block the test substitutes", "has no stand-in for this exact text", "no longer in"} {
		if !strings.Contains(all, want) {
			t.Errorf("plan errors lack %q:\n%s", want, all)
		}
	}
	// A run block runs with its local copies, and a local copy no run
	// block uses is an error.
	steps := []Step{{Block: Block{Marker: "run", Text: "kubectl apply -k 'https://x?ref=1'"}}}
	errs = UseLocalCopies(steps, []LocalCopy{{From: "'https://x?ref=1'", To: `"$X"`, Why: "x"}, {From: "gone", To: "y", Why: "y"}})
	if steps[0].Text != `kubectl apply -k "$X"` || len(steps[0].Copies) != 1 {
		t.Errorf("run block with a local copy: %+v", steps[0])
	}
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "no run block") {
		t.Errorf("local-copy errors %v, want one for the unused copy", errs)
	}
	// An indented block (in a list item) is read de-indented.
	blocks, errs = Parse([]byte("1. step\n\n   <!-- e2e: run -->\n   ```sh\n   echo b\n   ```\n"))
	if len(errs) != 0 || len(blocks) != 1 || blocks[0].Text != "echo b" {
		t.Errorf("indented block: %+v %v", blocks, errs)
	}
}

// TestInstallDocBlocks: every shell block of docs/install.md is marked, and
// every substituted one has its stand-in, without running anything.
func TestInstallDocBlocks(t *testing.T) {
	steps, errs := Read("../..", Substitutions, LocalCopies)
	for _, err := range errs {
		t.Error(err)
	}
	var run, sub int
	for _, s := range steps {
		if s.Sub == nil {
			run++
		} else {
			sub++
		}
	}
	if run == 0 || sub == 0 {
		t.Errorf("%d blocks to run and %d substituted: the page lost its path", run, sub)
	}
	t.Logf("%s: %d shell blocks run as written, %d substituted", Page, run, sub)
}
