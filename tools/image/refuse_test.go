package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRefusesABinaryScratchCannotRun: a cgo, non-Linux or untrimmed binary
// is refused with the reason, and nothing is written.
func TestRefusesABinaryScratchCannotRun(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module x\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		env   []string
		flags []string
		want  string
	}{
		"static, trimmed":  {env: []string{"CGO_ENABLED=0"}, flags: []string{"-trimpath"}},
		"cgo":              {env: []string{"CGO_ENABLED=1"}, flags: []string{"-trimpath"}, want: `CGO_ENABLED="1"`},
		"not trimmed":      {env: []string{"CGO_ENABLED=0"}, want: "without -trimpath"},
		"built for darwin": {env: []string{"CGO_ENABLED=0", "GOOS=darwin"}, flags: []string{"-trimpath"}, want: `GOOS="darwin"`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			bin := filepath.Join(dir, "stackdome")
			build := exec.Command("go", append(append([]string{"build"}, tc.flags...), "-o", bin, ".")...)
			build.Dir = src
			build.Env = append(os.Environ(), tc.env...)
			if out, err := build.CombinedOutput(); err != nil {
				t.Skipf("cannot build the sample binary here: %v\n%s", err, out)
			}
			out := filepath.Join(dir, "image.tar")
			var stdout, stderr bytes.Buffer
			err := run([]string{"-binary", bin, "-out", out, "-version", "v", "-revision", "r", "-created", "0"}, &stdout, &stderr)
			_, statErr := os.Stat(out)
			if tc.want == "" {
				if err != nil || statErr != nil {
					t.Fatalf("refused a good binary: %v %v", err, statErr)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
			if statErr == nil {
				t.Errorf("%s written for a refused binary", out)
			}
		})
	}
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-out", "x", "-version", "v", "-revision", "r", "-created", "1"}, "-binary is required"},
		{[]string{"-binary", "b", "-out", "x", "-version", "v", "-revision", "r", "-created", "yesterday"}, `-created "yesterday": want Unix seconds`},
		{[]string{"-binary", "b", "-out", "x", "-version", "v", "-revision", "r", "-created", "1", "extra"}, `unexpected argument "extra"`},
	} {
		t.Run(fmt.Sprint(tc.args), func(t *testing.T) {
			t.Setenv("SOURCE_DATE_EPOCH", "")
			err := run(tc.args, io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
}
