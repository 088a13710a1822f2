package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the stackdome checkout: go test runs in tools/image.
const repoRoot = "../.."

// runMake runs make in the checkout with args and env added to the test's
// environment, with DOCKER_CONFIG pointing at an empty directory so that no
// credentials of the machine are read, and returns stdout, stderr and the
// error.
func runMake(t *testing.T, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command("make", append([]string{"-s", "--no-print-directory", "-C", repoRoot}, args...)...)
	cmd.Env = append(os.Environ(), "DOCKER_CONFIG="+t.TempDir())
	cmd.Env = append(cmd.Env, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// digests reads the lines tools/image build prints: "index <digest>" and
// "<os/arch> <digest>".
func digests(t *testing.T, stdout string) map[string]string {
	t.Helper()
	d := map[string]string{}
	for _, line := range strings.Split(stdout, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && strings.HasPrefix(f[1], "sha256:") {
			d[f[0]] = f[1]
		}
	}
	if d["index"] == "" {
		t.Fatalf("make printed no index digest:\n%s", stdout)
	}
	return d
}

func git(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// wantRevision is the commit, marked -dirty when the checkout has changes
// the commit does not: then the image is not that commit's.
func wantRevision(t *testing.T) string {
	t.Helper()
	rev := git(t, "rev-parse", "HEAD")
	if git(t, "status", "--porcelain") != "" {
		rev += "-dirty"
	}
	return rev
}

// chartAppVersion is chart/Chart.yaml's appVersion: the tag the chart pulls
// by default (chart/templates/_helpers.tpl, stackdome.image).
func chartAppVersion(t *testing.T) string {
	t.Helper()
	for _, line := range readLines(t, "chart/Chart.yaml") {
		if v, ok := strings.CutPrefix(line, "appVersion:"); ok {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	t.Fatal("chart/Chart.yaml has no appVersion")
	return ""
}

// chartImageRepository is chart/values.yaml's image.repository.
func chartImageRepository(t *testing.T) string {
	t.Helper()
	inImage := false
	for _, line := range readLines(t, "chart/values.yaml") {
		switch {
		case line == "image:":
			inImage = true
		case inImage && !strings.HasPrefix(line, " ") && line != "":
			inImage = false
		case inImage:
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "repository:"); ok {
				return strings.Trim(strings.TrimSpace(v), `"'`)
			}
		}
	}
	t.Fatal("chart/values.yaml has no image.repository")
	return ""
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, path))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		lines = append(lines, s.Text())
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}
