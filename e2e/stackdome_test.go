//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var stackdomeBin struct {
	once sync.Once
	path string
	err  error
}

// buildStackdome builds the repository's main package once per run.
func buildStackdome(t *testing.T) string {
	t.Helper()
	stackdomeBin.once.Do(func() {
		out := filepath.Join(suite.tmp, "stackdome")
		cmd := exec.Command("go", "build", "-o", out, ".")
		cmd.Dir = suite.root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if msg, err := cmd.CombinedOutput(); err != nil {
			stackdomeBin.err = fmt.Errorf("go build stackdome: %w\n%s", err, msg)
			return
		}
		stackdomeBin.path = out
	})
	if stackdomeBin.err != nil {
		t.Fatal(stackdomeBin.err)
	}
	return stackdomeBin.path
}
