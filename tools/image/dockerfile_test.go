package main

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDockerfileLabels: a Dockerfile at the repository's root labels its
// image as make image does: every one of fixedLabels with its value, and
// every one of buildLabels' keys (their values come from its build
// arguments, so only the key is held). Without a Dockerfile there is
// nothing to hold.
func TestDockerfileLabels(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("no Dockerfile at the repository's root")
	}
	if err != nil {
		t.Fatal(err)
	}
	got, err := dockerfileLabels(string(b))
	if err != nil {
		t.Fatalf("Dockerfile: %v", err)
	}
	for k, v := range fixedLabels {
		if got[k] != v {
			t.Errorf("Dockerfile: LABEL %s=%q, make image sets %q (tools/image/image.go, fixedLabels)", k, got[k], v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(imageSpec{}.buildLabels())) {
		if _, ok := got[k]; !ok {
			t.Errorf("Dockerfile: no LABEL %s, which make image sets (tools/image/image.go, buildLabels)", k)
		}
	}
}

// TestDockerfileLabelsParse: what dockerfileLabels reads of the LABEL
// forms Docker documents, so that TestDockerfileLabels holds what a
// Dockerfile says.
func TestDockerfileLabelsParse(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    map[string]string
		wantErr string
	}{
		"one a line": {
			in:   "FROM scratch\nLABEL a=1\nlabel b=\"two words\"\n",
			want: map[string]string{"a": "1", "b": "two words"},
		},
		"continued, comments, build arguments": {
			in: "ARG VERSION\n# LABEL ignored=1\nLABEL org.opencontainers.image.title=stackdome \\\n" +
				"      org.opencontainers.image.version=${VERSION} \\\n      x=\"a \\\"q\\\"\"\nCOPY x /x\n",
			want: map[string]string{"org.opencontainers.image.title": "stackdome", "org.opencontainers.image.version": "${VERSION}", "x": `a "q"`},
		},
		"last stage wins": {
			in:   "FROM golang AS build\nLABEL a=build\nFROM scratch\nLABEL a=final\n",
			want: map[string]string{"a": "final"},
		},
		"the builder's labels are not the image's": {
			in:   "FROM golang AS build\nLABEL a=build\nFROM scratch\nLABEL b=final\n",
			want: map[string]string{"b": "final"},
		},
		"legacy form": {in: "LABEL a 1\n", wantErr: `LABEL "a": want key=value`},
		"open quote":  {in: "LABEL a=\"1\n", wantErr: `LABEL a="1: unterminated quote`},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := dockerfileLabels(tc.in)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if d := cmp.Diff(tc.wantErr, gotErr); d != "" {
				t.Errorf("error (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.want, got); err == nil && d != "" {
				t.Errorf("labels (-want +got):\n%s", d)
			}
		})
	}
}

// dockerfileLabels returns the labels the last stage of a Dockerfile sets
// with LABEL key=value …, the image it builds: lines joined at a trailing
// backslash, comments skipped, double-quoted values unquoted, build
// arguments left as written.
func dockerfileLabels(dockerfile string) (map[string]string, error) {
	labels := map[string]string{}
	for _, line := range strings.Split(strings.ReplaceAll(dockerfile, "\\\n", " "), "\n") {
		line = strings.TrimSpace(line)
		instr, rest, _ := strings.Cut(line, " ")
		switch strings.ToUpper(instr) {
		case "FROM":
			labels = map[string]string{}
		case "LABEL":
			words, err := shellWords(rest)
			if err != nil {
				return nil, err
			}
			for _, w := range words {
				k, v, ok := strings.Cut(w, "=")
				if !ok {
					return nil, errors.New("LABEL " + strconv.Quote(w) + ": want key=value")
				}
				labels[k] = v
			}
		}
	}
	return labels, nil
}

// shellWords splits s at unquoted blanks, removing double quotes and the
// backslash of \" within them.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\\' && i+1 < len(s) && s[i+1] == '"':
			w.WriteByte('"')
			i++
		case c == '"':
			quoted, inWord = !quoted, true
		case !quoted && (c == ' ' || c == '\t'):
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		return nil, errors.New("LABEL " + strings.TrimSpace(s) + ": unterminated quote")
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}
