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
// the (missing) file proves every flag name and value was accepted. The args
// are flags only: the image's entrypoint, /stackdome serve, names the command
// (tools/image), and a second "serve" would be refused as an argument.
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
			for _, a := range args {
				if !strings.HasPrefix(a, "--") {
					t.Fatalf("arg %q in %q is not a flag: the entrypoint /stackdome serve comes first", a, args)
				}
			}
			out, err := exec.Command(bin, append([]string{"sync", "-f", request}, args...)...).CombinedOutput()
			if err == nil || !strings.Contains(string(out), "open "+request) {
				t.Fatalf("stackdome rejected the chart's flags %q: %v\n%s", args, err, out)
			}
		})
	}
}
