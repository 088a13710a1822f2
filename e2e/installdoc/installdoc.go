// Package installdoc reads docs/install.md's shell blocks, and pairs each
// with what runs in the e2e suite: the block as written, the block with the
// URL it fetches replaced by a pinned local copy, or a stand-in.
//
// Every shell block of the page is preceded (blank lines apart) by a marker,
// `<!-- e2e: run -->` or `<!-- e2e: substituted -->`, an HTML comment the
// rendered page does not show. Parse reports a block without one; Plan
// reports a substituted block with no stand-in word for word, a run block
// that has one, and a stand-in whose block is gone; UseLocalCopies reports a
// local copy no run block uses. So a command added to the page is either run
// or named with what stands in for it.
//
// It has no build tag and no cluster: `make test` checks the page, and the
// e2e suite (e2e/node's TestInstallDoc) runs what it plans.
package installdoc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Page is the page, relative to the repository root.
const Page = "docs/install.md"

// Block is one shell block of the page.
type Block struct {
	Line   int    // of the opening fence, 1-based
	Marker string // "run" or "substituted"
	Text   string // the block's lines, de-indented, without the fences
}

func (b Block) String() string {
	first, _, _ := strings.Cut(b.Text, "\n")
	return fmt.Sprintf("%s:%d (%s) %q", Page, b.Line, b.Marker, first)
}

// Substitution is what runs, in the page's shell, instead of a block that
// needs what the suite stands in for.
type Substitution struct {
	Doc   string // the block exactly as the page has it
	Shell string // what runs instead ("" nothing)
	Why   string // what the block does on a cluster, and what stands in here
}

// LocalCopy is what a run block fetches from the internet, replaced (and
// nothing else of the block) by the pinned local copy of the same thing.
type LocalCopy struct {
	From string // exactly as the page has it
	To   string // what runs instead: a variable the test sets
	Why  string
}

// Step is one block and, when it is substituted, its stand-in; Text is
// what runs (a run block with its local copies).
type Step struct {
	Block  Block
	Sub    *Substitution
	Text   string
	Copies []string // the Why of each local copy Text uses
}

var (
	fenceOpen = regexp.MustCompile("^( *)```([A-Za-z0-9_+-]*)\\s*$")
	markerRE  = regexp.MustCompile(`^ *<!-- e2e: (run|substituted) -->\s*$`)
	anyMarker = regexp.MustCompile(`<!-- *e2e:`)
)

// shellLangs are the fences whose blocks are commands.
var shellLangs = map[string]bool{"sh": true, "bash": true, "shell": true, "console": true, "zsh": true}

// Parse reads the shell blocks of the page. Every shell block must be
// preceded (blank lines apart) by a marker, and every marker must precede a
// shell block.
func Parse(data []byte) ([]Block, []error) {
	var (
		blocks  []Block
		errs    []error
		marker  string // pending marker
		markerL int
		inFence bool
		indent  int
		lang    string
		start   int
		body    []string
	)
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if inFence {
			if strings.TrimSpace(line) == "```" {
				inFence = false
				if shellLangs[lang] {
					if marker == "" {
						errs = append(errs, fmt.Errorf("%s:%d: a %s block without a marker: say how make e2e treats it (<!-- e2e: run --> or <!-- e2e: substituted -->, and a stand-in in e2e/installdoc/standins.go)", Page, start, lang))
					} else {
						blocks = append(blocks, Block{Line: start, Marker: marker, Text: strings.Join(body, "\n")})
					}
				} else if marker != "" {
					errs = append(errs, fmt.Errorf("%s:%d: marker before a %q block, which is not a shell block", Page, markerL, lang))
				}
				marker = ""
				continue
			}
			trimmed := line
			for i := 0; i < indent && strings.HasPrefix(trimmed, " "); i++ {
				trimmed = trimmed[1:]
			}
			body = append(body, trimmed)
			continue
		}
		if m := fenceOpen.FindStringSubmatch(line); m != nil {
			inFence, indent, lang, start, body = true, len(m[1]), m[2], n, nil
			continue
		}
		if m := markerRE.FindStringSubmatch(line); m != nil {
			if marker != "" {
				errs = append(errs, fmt.Errorf("%s:%d: a marker after the marker of line %d, with no block between", Page, n, markerL))
			}
			marker, markerL = m[1], n
			continue
		}
		if anyMarker.MatchString(line) {
			errs = append(errs, fmt.Errorf("%s:%d: malformed e2e marker %q (want <!-- e2e: run --> or <!-- e2e: substituted -->)", Page, n, strings.TrimSpace(line)))
			continue
		}
		if strings.TrimSpace(line) != "" && marker != "" {
			errs = append(errs, fmt.Errorf("%s:%d: marker not followed by a shell block", Page, markerL))
			marker = ""
		}
	}
	if inFence {
		errs = append(errs, fmt.Errorf("%s:%d: block never closed", Page, start))
	}
	if marker != "" {
		errs = append(errs, fmt.Errorf("%s:%d: marker not followed by a shell block", Page, markerL))
	}
	return blocks, errs
}

// Plan pairs each substituted block with its stand-in. A substituted block
// subs does not hold word for word, a run block subs holds (it would run
// something that cannot), and an entry of subs no block uses are errors.
func Plan(blocks []Block, subs []Substitution) ([]Step, []error) {
	var (
		steps []Step
		errs  []error
		used  = make([]bool, len(subs))
	)
	find := func(text string) int {
		for i := range subs {
			if subs[i].Doc == text {
				return i
			}
		}
		return -1
	}
	for _, b := range blocks {
		i := find(b.Text)
		switch {
		case b.Marker == "substituted" && i < 0:
			errs = append(errs, fmt.Errorf("%s: substituted, but e2e/installdoc/standins.go has no stand-in for this exact text:\n%s", b, IndentLines(b.Text)))
		case b.Marker == "run" && i >= 0:
			errs = append(errs, fmt.Errorf("%s: marked run, but it is a block the test substitutes (%s)", b, subs[i].Why))
		case i >= 0:
			used[i] = true
			steps = append(steps, Step{Block: b, Sub: &subs[i]})
		default:
			steps = append(steps, Step{Block: b})
		}
	}
	for i, u := range used {
		if !u {
			first, _, _ := strings.Cut(subs[i].Doc, "\n")
			errs = append(errs, fmt.Errorf("stand-in for a block no longer in %s (%q): remove it from Substitutions", Page, first))
		}
	}
	return steps, errs
}

// UseLocalCopies sets what each step runs: a substituted block its
// stand-in, a run block its own text with each local copy's From replaced.
// A local copy no run block uses is an error.
func UseLocalCopies(steps []Step, copies []LocalCopy) []error {
	used := make([]bool, len(copies))
	for i := range steps {
		s := &steps[i]
		if s.Sub != nil {
			s.Text = s.Sub.Shell
			continue
		}
		s.Text = s.Block.Text
		for j, c := range copies {
			if strings.Contains(s.Text, c.From) {
				s.Text = strings.ReplaceAll(s.Text, c.From, c.To)
				s.Copies = append(s.Copies, c.Why)
				used[j] = true
			}
		}
	}
	var errs []error
	for j, u := range used {
		if !u {
			errs = append(errs, fmt.Errorf("local copy of %s, which no run block of %s uses: remove it from LocalCopies", copies[j].From, Page))
		}
	}
	return errs
}

// Read reads the page of the repository at root and plans its steps.
func Read(root string, subs []Substitution, copies []LocalCopy) ([]Step, []error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(Page)))
	if err != nil {
		return nil, []error{err}
	}
	blocks, errs := Parse(data)
	steps, more := Plan(blocks, subs)
	errs = append(errs, more...)
	return steps, append(errs, UseLocalCopies(steps, copies)...)
}

// IndentLines indents every line of s by a tab, for an error message.
func IndentLines(s string) string {
	return "\t" + strings.ReplaceAll(s, "\n", "\n\t")
}
