package monitoring

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOperationsListsEveryMetric: every stackdome_* family the real binary
// exports is a row of docs/operations.md's table of stackdome's own metrics
// (the Go runtime's and the process's are named there as collectors), and
// the table lists no family the binary does not export.
func TestOperationsListsEveryMetric(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented, listed := metricsTable(string(doc))
	if len(listed) == 0 {
		t.Fatal(`docs/operations.md has no table under "## stackdome's own metrics"`)
	}
	var exported []string
	for name := range stackdomeExports(t) {
		if strings.HasPrefix(name, "stackdome_") {
			exported = append(exported, name)
			if !documented[name] {
				t.Errorf("docs/operations.md's metrics table does not list %s", name)
			}
		}
	}
	for _, name := range listed {
		if !slices.Contains(exported, name) {
			t.Errorf("docs/operations.md lists %s, which stackdome does not export", name)
		}
	}
}

// TestMetricsTable: what metricsTable reads of a table, abbreviated names
// and labels included.
func TestMetricsTable(t *testing.T) {
	doc := "## stackdome's own metrics\n\n| series | what |\n|---|---|\n" +
		"| `stackdome_hook_requests_total{hook, code}` | hook calls, see `stackdome_other` |\n" +
		"| `stackdome_portcheck_queue_depth`, `_dials_in_flight` | jobs |\n\n## Next\n\n| `stackdome_elsewhere` | x |\n"
	documented, listed := metricsTable(doc)
	if d := cmp.Diff([]string{"stackdome_hook_requests_total", "stackdome_portcheck_queue_depth", "stackdome_portcheck_dials_in_flight"}, listed); d != "" {
		t.Errorf("listed (-want +got):\n%s", d)
	}
	for _, name := range listed {
		if !documented[name] {
			t.Errorf("%s listed, not documented", name)
		}
	}
	for _, name := range []string{"stackdome_other", "stackdome_elsewhere"} {
		if documented[name] {
			t.Errorf("%s is no row's series", name)
		}
	}
}

// metricsTable reads the first cell of each row of the table under "##
// stackdome's own metrics": the families it names, labels cut. A name
// written as a suffix (`_dials_in_flight` after
// `stackdome_portcheck_queue_depth`) stands for a family of the row's first
// name's subsystem (its first two words). documented holds every name, listed
// them in order.
func metricsTable(doc string) (documented map[string]bool, listed []string) {
	_, section, _ := strings.Cut("\n"+doc, "\n## stackdome's own metrics\n")
	section, _, _ = strings.Cut(section, "\n## ")
	code := regexp.MustCompile("`([a-z_]+)[^`]*`")
	documented = map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		subsystem := ""
		for _, m := range code.FindAllStringSubmatch(cells[1], -1) {
			name := m[1]
			if strings.HasPrefix(name, "_") {
				name = subsystem + name
			} else if words := strings.SplitN(name, "_", 3); len(words) == 3 {
				subsystem = words[0] + "_" + words[1]
			}
			if strings.HasPrefix(name, "stackdome_") && !documented[name] {
				documented[name] = true
				listed = append(listed, name)
			}
		}
	}
	return documented, listed
}
