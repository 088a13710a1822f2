//go:build e2e

package framework

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
)

// ProgressEvery is how often a long step says it is still under way.
const ProgressEvery = 30 * time.Second

// Progress says, every period, which long step is under way, how far it
// is when it can tell (N of M) and for how long: "e2e/tools: building
// kube-apiserver (2 of 3), 90 s so far". A step that ends within a period
// prints nothing; between steps nothing is printed. It owns one goroutine,
// from NewProgress to Stop.
type Progress struct {
	label string
	print func(string)

	mu    sync.Mutex
	step  string        // "": no step under way
	count func() string // how far the step is ("2 of 3"); nil or "": unknown
	since time.Time

	stop, done chan struct{}
	once       sync.Once
}

// NewProgress starts reporting, every period, the step under way, on lines
// starting with label, through print (a test's Logf, a write to stderr).
func NewProgress(label string, every time.Duration, print func(string)) *Progress {
	p := &Progress{label: label, print: print, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-tick.C:
				if l := p.line(time.Now()); l != "" {
					p.print(l)
				}
			}
		}
	}()
	return p
}

// Step starts step what, whose clock starts now; count, when not nil, says
// how far it is each time it is reported. An empty what ends the step
// under way.
func (p *Progress) Step(what string, count func() string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.step, p.count, p.since = what, count, time.Now()
}

// Stop ends the reporting and returns once nothing more will be printed.
// It may be called more than once.
func (p *Progress) Stop() {
	p.once.Do(func() { close(p.stop) })
	<-p.done
}

// line is the report of the step under way at now, "" when none is.
func (p *Progress) line(now time.Time) string {
	p.mu.Lock()
	step, count, since := p.step, p.count, p.since
	p.mu.Unlock()
	if step == "" {
		return ""
	}
	how := ""
	if count != nil {
		if c := count(); c != "" {
			how = " (" + c + ")"
		}
	}
	return fmt.Sprintf("%s: %s%s, %d s so far", p.label, step, how, int(now.Sub(since).Seconds()))
}

// buildLine is a build script's line saying it starts or ends building a
// binary: "e2e/tools: building kube-apiserver (k8s.io/...) into ...",
// "e2e/tools: built kube-apiserver in 212s".
var buildLine = regexp.MustCompile(`^e2e/[a-z]+: (building|built) (\S+)`)

// buildWatch is the stderr of an e2e/<dir>/build.sh: each line is passed on
// to out and read for the binary being built, the step of progress; the
// scripts themselves are not changed, as each one's bytes are part of its
// cache key. products are the binaries the script builds, in its order,
// which give N of M.
type buildWatch struct {
	out      func([]byte)
	progress *Progress
	products []string
	partial  []byte
}

func (w *buildWatch) Write(b []byte) (int, error) {
	w.out(b)
	w.partial = append(w.partial, b...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(b), nil
		}
		w.read(string(w.partial[:i]))
		w.partial = w.partial[i+1:]
	}
}

func (w *buildWatch) read(line string) {
	m := buildLine.FindStringSubmatch(line)
	switch {
	case m == nil:
	case m[1] == "built":
		w.progress.Step("", nil)
	default:
		name := m[2]
		var count func() string
		for i, p := range w.products {
			if strings.EqualFold(p, name) {
				n := fmt.Sprintf("%d of %d", i+1, len(w.products))
				count = func() string { return n }
			}
		}
		w.progress.Step("building "+name, count)
	}
}
