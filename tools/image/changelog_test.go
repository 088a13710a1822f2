package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// release is one "## [x.y.z] - date" entry of CHANGELOG.md.
type release struct {
	version, date string
	sections      []string // its "### …" headings, in order
}

// changelog reads CHANGELOG.md's releases, newest first, failing the test
// on a heading Keep a Changelog (https://keepachangelog.com/en/1.1.0/)
// does not have: a release is "## [x.y.z] - YYYY-MM-DD" (one
// "## [Unreleased]" may come first), a section one of its change types or
// "Upgrade notes".
func changelog(t *testing.T) []release {
	t.Helper()
	heading := regexp.MustCompile(`^## \[([0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.-]+)?)\] - ([0-9]{4}-[0-9]{2}-[0-9]{2})$`)
	sections := []string{"Upgrade notes", "Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
	var rs []release
	for i, line := range readLines(t, "CHANGELOG.md") {
		switch {
		case line == "## [Unreleased]":
			if len(rs) > 0 {
				t.Errorf("CHANGELOG.md:%d: [Unreleased] comes before every release", i+1)
			}
		case strings.HasPrefix(line, "## "):
			m := heading.FindStringSubmatch(line)
			if m == nil {
				t.Errorf("CHANGELOG.md:%d: %q is no release heading: want ## [x.y.z] - YYYY-MM-DD", i+1, line)
				continue
			}
			if _, err := time.Parse(time.DateOnly, m[2]); err != nil {
				t.Errorf("CHANGELOG.md:%d: %v", i+1, err)
			}
			rs = append(rs, release{version: m[1], date: m[2]})
		case strings.HasPrefix(line, "### "):
			s := strings.TrimPrefix(line, "### ")
			if !slices.Contains(sections, s) {
				t.Errorf("CHANGELOG.md:%d: section %q: want one of %q", i+1, s, sections)
			}
			if len(rs) > 0 {
				rs[len(rs)-1].sections = append(rs[len(rs)-1].sections, s)
			}
		}
	}
	if len(rs) == 0 {
		t.Fatal("CHANGELOG.md names no release")
	}
	return rs
}

// TestChangelog: CHANGELOG.md's releases are newest first, each dated no
// earlier than the one before it, with something under it and a link, as
// Keep a Changelog has them, and no issue number.
func TestChangelog(t *testing.T) {
	rs := changelog(t)
	b, err := os.ReadFile(filepath.Join(repoRoot, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Its readers install releases: they cannot follow the tracker's
	// numbers, and the entry must say what changed itself.
	if m := regexp.MustCompile(`(?i)#[0-9]+\b|\bissue [0-9]+`).Find(b); m != nil {
		t.Errorf("CHANGELOG.md cites %q: say what changed instead", m)
	}
	for i, r := range rs {
		if len(r.sections) == 0 {
			t.Errorf("[%s] has no section", r.version)
		}
		if !strings.Contains(string(b), "\n["+r.version+"]: https://") {
			t.Errorf("[%s] has no link: want a line [%s]: https://… at the end", r.version, r.version)
		}
		if i == 0 {
			continue
		}
		newer := rs[i-1]
		if !semverLess(r.version, newer.version) || r.date > newer.date {
			t.Errorf("[%s] - %s comes after [%s] - %s: want newest first", newer.version, newer.date, r.version, r.date)
		}
	}
}

// semverLess orders x.y.z versions (a pre-release before its release).
func semverLess(a, b string) bool {
	parse := func(v string) ([3]int, string) {
		core, pre, _ := strings.Cut(v, "-")
		var n [3]int
		for i, p := range strings.SplitN(core, ".", 3) {
			n[i], _ = strconv.Atoi(p)
		}
		return n, pre
	}
	na, pa := parse(a)
	nb, pb := parse(b)
	if na != nb {
		return slices.Compare(na[:], nb[:]) < 0
	}
	return pa != "" && (pb == "" || pa < pb)
}
