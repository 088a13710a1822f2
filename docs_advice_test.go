package main

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// adviceFiles are the pages an operator copies commands from: docs/, the
// README, the chart's README and the NOTES Helm prints.
func adviceFiles(t *testing.T) map[string]string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	names = append(names, "README.md", filepath.Join("chart", "README.md"), filepath.Join("chart", "templates", "NOTES.txt"))
	files := map[string]string{}
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		files[n] = string(data)
	}
	return files
}

// TestDocsRaiseMaxBody: every --max-body=N the pages suggest is above the
// flag's default, read from the flag set itself: the pages only ever tell
// an operator to raise the limit (a 413 from a large StackResource), and a
// value below the default lowers it. One once said "raise the limit with
// --max-body=4194304", 4 MiB against the 32 MiB default.
func TestDocsRaiseMaxBody(t *testing.T) {
	var c config
	var raw rawFlags
	f := defineFlags("serve", &c, &raw, io.Discard).Lookup("max-body")
	if f == nil {
		t.Fatal("no --max-body flag")
	}
	def, err := strconv.ParseInt(f.DefValue, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for name, text := range adviceFiles(t) {
		for _, m := range regexp.MustCompile(`--max-body=([0-9]+)`).FindAllStringSubmatch(text, -1) {
			found++
			n, _ := strconv.ParseInt(m[1], 10, 64)
			if n <= def {
				t.Errorf("%s suggests %s, not above the default %d (%d MiB): it would lower the limit", name, m[0], def, def>>20)
			}
		}
	}
	t.Logf("%d --max-body values in the pages checked against the default %d", found, def)
}

// TestDocsMetacontrollerLogs: every `logs <kind>/metacontroller` the pages
// give names the kind Metacontroller's production manifests run it as, a
// StatefulSet (install.md's quick start waits for statefulset/metacontroller):
// `logs deploy/metacontroller` finds no Deployment.
func TestDocsMetacontrollerLogs(t *testing.T) {
	files := adviceFiles(t)
	if !strings.Contains(files[filepath.Join("docs", "install.md")], "rollout status statefulset/metacontroller") {
		t.Fatal("docs/install.md no longer waits for statefulset/metacontroller: which kind runs Metacontroller?")
	}
	statefulSet := map[string]bool{"sts": true, "statefulset": true, "statefulsets": true, "statefulset.apps": true}
	for name, text := range files {
		for _, m := range regexp.MustCompile(`logs (?:-[^ ]+ )*([a-z.]+)/metacontroller\b`).FindAllStringSubmatch(text, -1) {
			if !statefulSet[m[1]] {
				t.Errorf("%s: %q: Metacontroller runs as the StatefulSet metacontroller (logs sts/metacontroller, or pod metacontroller-0)", name, m[0])
			}
		}
	}
}
