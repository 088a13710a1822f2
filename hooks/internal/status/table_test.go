package status

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTableMatchesDesign: the state table in the docs and the chains that
// decide it name the same rows in the same order, so a reader can match
// them row for row. The docs' table is found by its header in whichever
// file of docs/ holds it. "spec invalid" and a CronJob's unparseable
// schedule are Invalid's (the hook decides nothing from an invalid spec),
// and a row opening with "…" continues the one above.
func TestTableMatchesDesign(t *testing.T) {
	const header = "| situation | Available | Converged | Stalled |"
	const after = "**after the row above decided:** "
	paths, err := filepath.Glob(filepath.Join("..", "..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows, jobRows, cronJobRows, amended []string
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
				situation == "type CronJob: a schedule the controller cannot parse", strings.HasPrefix(situation, "…"):
			case strings.HasPrefix(situation, "type Job:"):
				jobRows = append(jobRows, situation)
			case strings.HasPrefix(situation, "type CronJob:"):
				cronJobRows = append(cronJobRows, situation)
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
	situations := func(c chain, as []amendment) []string {
		var out []string
		for _, r := range c {
			out = append(out, r.situation)
		}
		for _, a := range as {
			out = append(out, a.situation)
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		docs, code []string
	}{
		{"servingTable", rows, situations(servingTable, nil)},
		{"jobTable", jobRows, situations(jobTable, nil)},
		{"cronJobTable and its amendments", cronJobRows, situations(cronJobTable, cronJobAmendments)},
		{"amendments", amended, situations(nil, amendments)},
	} {
		if diff := cmp.Diff(tc.docs, tc.code); diff != "" {
			t.Errorf("%s and the docs' state table differ (-docs +code):\n%s", tc.name, diff)
		}
	}
}
