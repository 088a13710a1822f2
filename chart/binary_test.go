package chart

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
)

// TestRenderedArgsParseInTheBinary hands the container args of every values
// combination to the stackdome binary itself: `stackdome sync` parses the same
// flags as `serve` and only then opens its request file, so an error about
// the (missing) file proves every flag name and value was accepted.
func TestRenderedArgsParseInTheBinary(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "stackdome")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	request := filepath.Join(t.TempDir(), "no-such-request.json")
	for name, in := range renderCases {
		t.Run(name, func(t *testing.T) {
			args := find[*appsv1.Deployment](t, decode(t, render(t, in)), "Deployment").Spec.Template.Spec.Containers[0].Args
			if len(args) == 0 || args[0] != "serve" {
				t.Fatalf("args %q do not start with serve", args)
			}
			out, err := exec.Command(bin, append([]string{"sync", "-f", request}, args[1:]...)...).CombinedOutput()
			if err == nil || !strings.Contains(string(out), "open "+request) {
				t.Fatalf("stackdome rejected the chart's flags %q: %v\n%s", args[1:], err, out)
			}
		})
	}
}
