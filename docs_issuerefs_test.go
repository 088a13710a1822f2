package main

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// userDocs are the pages a platform team reads to install and run
// stackdome. They are published apart from this project's tracker, so "issue
// 29" or "(#25)" tells their reader nothing: state what changed and why
// instead. A file not there yet (CHANGELOG.md) is checked once it exists.
var userDocs = []string{
	"README.md",
	"docs/install.md",
	"docs/operations.md",
	"docs/errorpages.md",
	"docs/bad-input.md",
	"docs/flags.md", // generated from the flags' help: stackdome serve --help
	"chart/README.md",
	"chart/values.yaml", // its comments only: they become chart/README.md
	"chart/templates/NOTES.txt",
	"CHANGELOG.md",
}

var (
	// issueWord is an issue or pull request named by number: "issue 29",
	// "issues #3", "pull request 12", "PR #7".
	issueWord = regexp.MustCompile(`(?i)\b(?:issues?|pull requests?|PRs?)\s+#?[0-9]+\b`)
	// bareRef is "#25" standing alone. A number qualified by its repository
	// (kube-state-metrics#1973, golang/go#45621) cites an upstream tracker
	// a reader can follow, and an HTML entity (&#38;) is no reference, so
	// what precedes the # must be neither a name character, /, & nor #.
	bareRef = regexp.MustCompile(`(?:^|[^\w/&#.-])(#[0-9]+)\b`)
	// digitColour is a CSS colour of digits only (#000, #111111): one in
	// code is a colour, not an issue.
	digitColour = regexp.MustCompile(`^#(?:[0-9]{3}|[0-9]{4}|[0-9]{6}|[0-9]{8})$`)
)

// issueRefs returns each issue reference in text as "line: reference".
// yamlComments limits the search to a YAML file's comments.
func issueRefs(text string, yamlComments bool) []string {
	var found []string
	inFence := false
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inFence = !inFence
			continue
		}
		if yamlComments {
			line = yamlComment(line)
		}
		for _, m := range issueWord.FindAllString(line, -1) {
			found = append(found, strconv.Itoa(n)+": "+m)
		}
		for _, loc := range bareRef.FindAllStringSubmatchIndex(line, -1) {
			ref := line[loc[2]:loc[3]]
			if digitColour.MatchString(ref) && (inFence || inCodeSpan(line, loc[2])) {
				continue
			}
			found = append(found, strconv.Itoa(n)+": "+ref)
		}
	}
	return found
}

// yamlComment is the comment of one YAML line: from a # that starts the
// line or follows a blank, outside quotes; "" when it has none.
func yamlComment(line string) string {
	quote := byte(0)
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return line[i+1:]
		}
	}
	return ""
}

// inCodeSpan reports whether byte i of a Markdown line is inside a `code
// span`: an odd number of backticks before it.
func inCodeSpan(line string, i int) bool {
	return strings.Count(line[:i], "`")%2 == 1
}

// TestUserDocsCiteNoIssues: no user doc names an issue or pull request of
// this project by number.
func TestUserDocsCiteNoIssues(t *testing.T) {
	checked := 0
	for _, name := range userDocs {
		data, err := os.ReadFile(filepath.FromSlash(name))
		if os.IsNotExist(err) && name == "CHANGELOG.md" {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, ref := range issueRefs(string(data), strings.HasSuffix(name, ".yaml")) {
			t.Errorf("%s:%s: an issue number means nothing to the reader of a user doc: say what changed and why", name, ref)
		}
	}
	t.Logf("%d user docs checked", checked)
}

// TestIssueRefsBite: the check finds each form the docs once held, and lets
// through what is no issue of this project.
func TestIssueRefsBite(t *testing.T) {
	md := "bad: (issue 29 saw 38 → 163 MiB)\n" +
		"bad: Before #25 such an app read `Available`.\n" +
		"bad: | an invalid spec (#25) | x |\n" +
		"bad: Fields of #26 (`schema/twodoors_test.go`)\n" +
		"bad: closing issues #496, #345\n" +
		"bad: since pull request #244, and PR 12\n" +
		"ok: ([kube-state-metrics#1973](https://github.com/kubernetes/kube-state-metrics/issues/1973)), golang/go#45621\n" +
		"ok: a colour `#4f46e5`, `#000`, and `#rrggbb`; an entity &#38;\n" +
		"ok: [a heading](operations.md#stackdomeundialedports)\n" +
		"```css\ncolor: #111111;\n```\n" +
		"## 2. A heading\n"
	want := []string{
		"1: issue 29",
		"2: #25",
		"3: #25",
		"4: #26",
		"5: issues #496",
		"5: #496",
		"5: #345",
		"6: pull request #244",
		"6: PR 12",
		"6: #244",
	}
	if d := cmp.Diff(want, issueRefs(md, false)); d != "" {
		t.Errorf("markdown (-want +got):\n%s", d)
	}
	yaml := "# -- 39 MiB of Secrets in issue 29's measurement\n" +
		"colour: \"#123\" # the accent (#7)\n" +
		"brand: '#issue 5'\n"
	if d := cmp.Diff([]string{"1: issue 29", "2: #7"}, issueRefs(yaml, true)); d != "" {
		t.Errorf("yaml comments (-want +got):\n%s", d)
	}
}
