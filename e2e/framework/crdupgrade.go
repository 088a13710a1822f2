//go:build e2e

package framework

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackdome/stackdome/e2e/installdoc"
)

// docs/install.md's CRD upgrade command, as the page writes it.

// CRDUpgradeCommand is the page's command that applies the chart's CRD.
type CRDUpgradeCommand struct {
	Block installdoc.Block
	Words []string
	File  string // the CRD file it applies, relative to the repository root
}

// PageCRDUpgradeCommand finds the page's (InstallDoc, under the repository
// root) one `kubectl apply … -f chart/crds/…` command; t fails unless there
// is exactly one and it applies a file of chart/crds/.
func PageCRDUpgradeCommand(t *testing.T, root string) CRDUpgradeCommand {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(InstallDoc)))
	if err != nil {
		t.Fatal(err)
	}
	blocks, errs := installdoc.Parse(data)
	for _, err := range errs {
		t.Error(err)
	}
	var found []CRDUpgradeCommand
	for _, b := range blocks {
		for _, c := range ShellCommands(b.Text) {
			if !strings.HasPrefix(c, "kubectl apply ") || !strings.Contains(c, "chart/crds/") {
				continue
			}
			words, err := ShellWords(c)
			if err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			cmd := CRDUpgradeCommand{Block: b, Words: words}
			for i, w := range words {
				if (w == "-f" || w == "--filename") && i+1 < len(words) {
					cmd.File = words[i+1]
				} else if f, ok := strings.CutPrefix(w, "--filename="); ok {
					cmd.File = f
				}
			}
			if !strings.HasPrefix(cmd.File, "chart/crds/") {
				t.Fatalf("%s: %q applies no file of chart/crds/", b, c)
			}
			found = append(found, cmd)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: %d commands apply chart/crds/, want the Upgrade section's one", InstallDoc, len(found))
	}
	return found[0]
}
