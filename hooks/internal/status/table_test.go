package status

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTableMatchesDesign: the state table in the docs and the chain that
// decides it name the same rows in the same order, so a reader can match
// them row for row. The docs' table is found by its header in whichever
// file of docs/ holds it. Its rows of the run-to-completion types are
// decideRun's (run.go), "spec invalid" is Invalid's, and a row opening with
// "…" continues the one above.
func TestTableMatchesDesign(t *testing.T) {
	const header = "| situation | Available | Converged | Stalled |"
	const after = "**after the row above decided:** "
	paths, err := filepath.Glob(filepath.Join("..", "..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows, amended []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		in := false
		for line := range strings.Lines(string(b)) {
			switch {
			case strings.HasPrefix(line, header):
				if in || rows != nil {
					t.Fatalf("%s: a second state table", p)
				}
				in = true
				continue
			case !in:
				continue
			case !strings.HasPrefix(line, "|"):
				in = false
				continue
			}
			situation := strings.TrimSpace(strings.Split(line, "|")[1])
			situation = strings.ReplaceAll(situation, "`", "")
			switch {
			case strings.HasPrefix(situation, "---"), situation == "spec invalid",
				strings.HasPrefix(situation, "type Job:"), strings.HasPrefix(situation, "type CronJob:"),
				strings.HasPrefix(situation, "…"):
			case strings.HasPrefix(situation, after):
				amended = append(amended, strings.TrimPrefix(situation, after))
			default:
				if amended != nil {
					t.Errorf("row %q follows the amendments: the table's rows come first", situation)
				}
				rows = append(rows, situation)
			}
		}
	}
	if rows == nil {
		t.Fatalf("no state table (a line %q) in docs/*.md", header)
	}
	var code, codeAmended []string
	for _, r := range servingTable {
		code = append(code, r.situation)
	}
	for _, a := range amendments {
		codeAmended = append(codeAmended, a.situation)
	}
	if diff := cmp.Diff(rows, code); diff != "" {
		t.Errorf("servingTable and the docs' state table differ (-docs +code):\n%s", diff)
	}
	if diff := cmp.Diff(amended, codeAmended); diff != "" {
		t.Errorf("amendments and the docs' rows after the table differ (-docs +code):\n%s", diff)
	}
}
