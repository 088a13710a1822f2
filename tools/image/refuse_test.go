package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusesABinaryScratchCannotRun: a cgo, non-Linux or untrimmed binary,
// or two binaries for one platform, are refused with the reason, and
// nothing is written.
func TestRefusesABinaryScratchCannotRun(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module x\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sample := func(t *testing.T, env []string, flags ...string) string {
		t.Helper()
		bin := filepath.Join(t.TempDir(), "stackdome")
		build := exec.Command("go", append(append([]string{"build"}, flags...), "-o", bin, ".")...)
		build.Dir = src
		build.Env = append(os.Environ(), env...)
		if out, err := build.CombinedOutput(); err != nil {
			t.Skipf("cannot build the sample binary here: %v\n%s", err, out)
		}
		return bin
	}
	linux := []string{"CGO_ENABLED=0", "GOOS=linux"}
	tests := map[string]struct {
		binaries func(t *testing.T) []string
		want     string
	}{
		"static, trimmed, two platforms": {binaries: func(t *testing.T) []string {
			return []string{sample(t, append(linux, "GOARCH=arm64"), "-trimpath"), sample(t, append(linux, "GOARCH=amd64"), "-trimpath")}
		}},
		"cgo": {binaries: func(t *testing.T) []string {
			return []string{sample(t, []string{"CGO_ENABLED=1", "GOOS=linux"}, "-trimpath")}
		}, want: `CGO_ENABLED="1"`},
		"not trimmed": {binaries: func(t *testing.T) []string {
			return []string{sample(t, linux)}
		}, want: "without -trimpath"},
		"built for darwin": {binaries: func(t *testing.T) []string {
			return []string{sample(t, []string{"CGO_ENABLED=0", "GOOS=darwin"}, "-trimpath")}
		}, want: `GOOS="darwin"`},
		"one platform twice": {binaries: func(t *testing.T) []string {
			return []string{sample(t, append(linux, "GOARCH=amd64"), "-trimpath"), sample(t, append(linux, "GOARCH=amd64"), "-trimpath")}
		}, want: "are both linux/amd64"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "image.tar")
			sbom := filepath.Join(dir, "image.sbom.cdx.json")
			args := []string{"build", "-out", out, "-sbom", sbom, "-version", "v", "-revision", "r", "-created", "0"}
			for _, b := range tc.binaries(t) {
				args = append(args, "-binary", b)
			}
			err := run(context.Background(), args, io.Discard, io.Discard)
			_, statErr := os.Stat(out)
			_, sbomErr := os.Stat(sbom)
			if tc.want == "" {
				if err != nil || statErr != nil || sbomErr != nil {
					t.Fatalf("refused good binaries: %v %v %v", err, statErr, sbomErr)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
			if statErr == nil || sbomErr == nil {
				t.Errorf("%s or %s written for a refused binary", out, sbom)
			}
		})
	}
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "want a command: build, pack, push or plainhttp"},
		{[]string{"pull"}, `unknown command "pull"`},
		{[]string{"build", "-out", "x", "-version", "v", "-revision", "r", "-created", "1"}, "-binary is required"},
		{[]string{"build", "-binary", "b", "-out", "x", "-version", "v", "-revision", "r", "-created", "yesterday"}, `-created "yesterday": want Unix seconds`},
		{[]string{"build", "-binary", "b", "-out", "x", "-version", "v", "-revision", "r", "-created", "1", "extra"}, `unexpected argument "extra"`},
		{[]string{"push", "-archive", "x"}, "-archive and -to are required"},
		// Never Docker Hub, never :latest by default.
		{[]string{"push", "-archive", "x", "-to", "stackdome/stackdome:0.1.0"}, "want host[:port]/path:tag"},
		{[]string{"push", "-archive", "x", "-to", "localhost:5001/stackdome"}, "want host[:port]/path:tag"},
		{[]string{"plainhttp"}, "want one registry: host[:port][/path]"},
		{[]string{"plainhttp", "http://localhost:5001"}, `registry "http://localhost:5001": want host[:port][/path]`},
	} {
		t.Run(fmt.Sprint(tc.args), func(t *testing.T) {
			t.Setenv("SOURCE_DATE_EPOCH", "")
			var stderr bytes.Buffer
			err := run(context.Background(), tc.args, io.Discard, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
}
