//go:build e2e

package node

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// What TestFaultsSurvived reads of a fault: the writes the API server
// stored while it lasted, and what a client of Traefik got.

// faultRow is one line of the run's table.
type faultRow struct {
	fault                   string
	apps                    int
	deletions, falseHealthy int
	flaps, windowsAgain     int
	routeFailures, noPage   int
	pages                   int // branded pages for "/" of an app the fault moved
	reconverge              time.Duration
	details                 []string
}

// fleetWatch watches the fleet's StackResources and every kind of child
// stackdome makes in its namespace.
type fleetWatch struct {
	apps     map[string]*faultApp
	watchers []*framework.Watcher
}

func watchFleet(t *testing.T, ns string, fl *fleet) *fleetWatch {
	f := framework.NewNodeFixture(t)
	fw := &fleetWatch{apps: map[string]*faultApp{}}
	for _, a := range fl.apps {
		fw.apps[a.name] = a
	}
	fw.watchers = append(fw.watchers, f.WatchPath("sr", framework.SRPath(ns, "")))
	for kind, path := range framework.ChildKinds {
		fw.watchers = append(fw.watchers, f.WatchPath(kind, fmt.Sprintf(path, ns)))
	}
	return fw
}

// gateMemory is what the statuses of one app said of its port gate so
// far: the workload revision, its grace window's start, and the newest
// verdict's dial.
type gateMemory struct {
	revision     string
	failingSince string
	checkedAt    time.Time
}

// row reads the events received from start to end and the answers
// through Traefik meanwhile; moved are the apps whose port or pods the
// fault changed, whose Available may change and whose route may answer
// the branded page. An app's 5xx without the page is a route failure
// unless the fault killed page servers (pagesKilled).
func (fw *fleetWatch) row(name string, start, end time.Time, took time.Duration, routes []routeAnswer, pagesKilled bool, moved map[string]bool) faultRow {
	r := faultRow{fault: name, apps: len(fw.apps), reconverge: took}
	for _, a := range routes {
		switch {
		case a.kind == noPage:
			r.noPage++
			if pagesKilled {
				continue
			}
		case a.kind == pageForApp && moved[a.app]:
			r.pages++
			continue
		}
		r.routeFailures++
		r.details = append(r.details, a.what)
	}
	gates := map[string]gateMemory{}
	for _, e := range framework.Merged(fw.watchers...) {
		during := !e.At.Before(start) && e.At.Before(end)
		what := fmt.Sprintf("rv %d %s %s %v", e.RV, e.Type, e.Kind, framework.Dig(e.Obj, "metadata", "name"))
		if e.Kind != "sr" {
			if during && e.Type == "DELETED" {
				r.deletions++
				r.details = append(r.details, what)
			}
			continue
		}
		a, ok := fw.apps[fmt.Sprint(framework.Dig(e.Obj, "metadata", "name"))]
		if !ok {
			continue
		}
		// The gate's memory is read from every write since the watch
		// began: a window opened again is one that differs from the
		// window an earlier write of the same revision held.
		again := gateAgain(gates, a.name, e.Obj)
		if !during {
			continue
		}
		if again != "" && !moved[a.name] {
			r.windowsAgain++
			r.details = append(r.details, what+": "+again)
		}
		c := framework.SRCondition(e.Obj, "Available")
		if c == nil {
			continue
		}
		if a.dead && c["status"] == "True" {
			r.falseHealthy++
			r.details = append(r.details, fmt.Sprintf("%s: Available=True %v with port 9090 dead", what, c["reason"]))
		}
		if a.down && c["status"] == "True" && c["reason"] == "Serving" {
			if at := checkedAt(e.Obj); at.After(a.downSince) {
				r.falseHealthy++
				r.details = append(r.details, fmt.Sprintf("%s: Serving from a dial at %s, port 8080 closed at %s", what,
					at.Format(time.StampMicro), a.downSince.Format(time.StampMicro)))
			}
		}
		if moved[a.name] {
			continue
		}
		if got, want := [2]any{c["status"], c["reason"]}, a.settled(); got != want {
			r.flaps++
			r.details = append(r.details, fmt.Sprintf("%s: Available %v %v, settled at %v %v", what, got[0], got[1], want[0], want[1]))
		}
	}
	return r
}

// gateAgain records sr's port gate in gates and says how it contradicts
// what an earlier write of the same workload revision held: a second grace
// window, or a verdict dialed before the one already written ("" if it
// does not).
func gateAgain(gates map[string]gateMemory, app string, sr obj) string {
	rev, _ := framework.Dig(sr, "status", "portCheck", "revision").(string)
	since, _ := framework.Dig(sr, "status", "portCheck", "failingSince").(string)
	at := checkedAt(sr)
	m, seen := gates[app]
	if rev == "" {
		return ""
	}
	if !seen || m.revision != rev {
		gates[app] = gateMemory{revision: rev, failingSince: since, checkedAt: at}
		return ""
	}
	var again string
	switch {
	case since != "" && m.failingSince != "" && since != m.failingSince:
		again = fmt.Sprintf("grace window from %s, one from %s written before", since, m.failingSince)
	case !at.IsZero() && at.Before(m.checkedAt):
		again = fmt.Sprintf("a verdict dialed at %s over one dialed at %s", at.Format(time.StampMicro), m.checkedAt.Format(time.StampMicro))
	}
	if since != "" {
		m.failingSince = since
	}
	if at.After(m.checkedAt) {
		m.checkedAt = at
	}
	gates[app] = m
	return again
}

// checkedAt is sr's status.portCheck.checkedAt (zero if none).
func checkedAt(sr obj) time.Time {
	s, _ := framework.Dig(sr, "status", "portCheck", "checkedAt").(string)
	at, _ := time.Parse(time.RFC3339Nano, s)
	return at
}

func formatFaultTable(rows []faultRow) string {
	var b strings.Builder
	b.WriteString("| fault | apps | deletions | false-healthy moments | flaps | windows opened again | route failures | 5xx without the page | branded 503 of a moved app | time to reconverge |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d | %d | %s |\n", r.fault, r.apps, r.deletions, r.falseHealthy, r.flaps, r.windowsAgain, r.routeFailures, r.noPage, r.pages, r.reconverge.Round(100*time.Millisecond))
	}
	return b.String()
}

// routeProbe asks Traefik for every public app, one after another,
// the whole run, and keeps every answer that is not the app's own: for
// "/", its 200; with pages (the full form), also for "/status/503" as a
// browser asks, its 503 or stackdome's branded 503 page.
type routeProbe struct {
	mu      sync.Mutex
	asked   int
	answers []routeAnswer
}

// routeAnswer is an answer through Traefik that was not the app's.
type routeAnswer struct {
	app  string
	kind answerKind
	what string
}

// answerKind tells the answers that are not the app's apart.
type answerKind int

const (
	// notApp: Traefik's own error, or no answer.
	notApp answerKind = iota
	// noPage: the app's 5xx with its code kept but Traefik's text, not
	// the page: Traefik's errors middleware found the page server's
	// address refusing (a page server killed, its endpoint not yet
	// dropped by kube-proxy) and sends its load balancer's text.
	noPage
	// pageForApp: the branded 503 for "/": Traefik found no ready pod
	// of the app, and stackdome's page said so.
	pageForApp
)

func startRouteProbe(t *testing.T, apps []*faultApp, pages bool) *routeProbe {
	f := framework.NewNodeFixture(t)
	p := &routeProbe{}
	var live []*faultApp
	for _, a := range apps {
		// The apps with a dead port too: their route is Traefik's as
		// any other, and port 8080 serves.
		if a.public {
			live = append(live, a)
		}
	}
	paths := []string{"/"}
	if pages {
		paths = append(paths, "/status/503")
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	t.Cleanup(func() { close(done); <-stopped })
	go func() {
		defer close(stopped)
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			a, path := live[i%len(live)], paths[(i/len(live))%len(paths)]
			code, body, err := f.GetCodeAs(t.Context(), "http://"+net.JoinHostPort(f.TraefikIP(), "8000")+path, a.host(), "text/html")
			p.mu.Lock()
			p.asked++
			if kind, bad := classifyAnswer(path, code, body, err); bad != nil {
				p.answers = append(p.answers, routeAnswer{app: a.name, kind: kind,
					what: fmt.Sprintf("%s %s%s: %v", time.Now().Format(time.TimeOnly), a.host(), path, bad)})
			}
			p.mu.Unlock()
		}
	}()
	return p
}

func (p *routeProbe) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked, p.answers = 0, nil
}

// failures are the answers since the last reset that were not the app's.
func (p *routeProbe) failures() []routeAnswer {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]routeAnswer(nil), p.answers...)
}

// classifyAnswer says what is wrong with an answer to path, and what kind
// of answer it is: "/" wants the app's 200, "/status/503" the app's 503 or
// stackdome's branded page (nil: the answer is the app's).
func classifyAnswer(path string, code int, body string, err error) (answerKind, error) {
	page := strings.Contains(body, "<title>503 Service Unavailable</title>")
	switch {
	case err != nil:
		return notApp, err
	case path == "/" && code == 200 && strings.Contains(body, "port 8080"):
		return notApp, nil
	case path == "/status/503" && code == 503 && (page || strings.Contains(body, "port 8080 status 503")):
		return notApp, nil
	}
	bad := fmt.Errorf("%d %q", code, framework.Clip(body, 200))
	switch {
	case path == "/" && code == 503 && page:
		return pageForApp, bad
	case path == "/status/503" && code == 503:
		return noPage, bad
	}
	return notApp, bad
}

// TestFaultRowCounts: a fault's row counts what it is for, from the events
// received while the fault lasted and nothing else: a child deleted; a
// dead-port app read Available=True (both a false-healthy moment and a
// flap); a live app leaving Serving; an app whose port the test closed
// read Serving from a dial made after (false-healthy), but not from one
// made before, nor any change of it a flap (the fault moved it); a second
// grace window of one revision, and a verdict older than one written
// before; a route failure.
func TestFaultRowCounts(t *testing.T) {
	start := time.Now()
	at := func(d time.Duration) time.Time { return start.Add(d) }
	micro := func(d time.Duration) string {
		return at(d).UTC().Format("2006-01-02T15:04:05.000000Z07:00")
	}
	sr := func(name, status, reason string, gate ...string) obj {
		st := obj{"conditions": []any{obj{"type": "Available", "status": status, "reason": reason}}}
		if len(gate) > 0 {
			pc := obj{"revision": gate[0]}
			if gate[1] != "" {
				pc["checkedAt"] = gate[1]
			}
			if gate[2] != "" {
				pc["failingSince"] = gate[2]
			}
			st["portCheck"] = pc
		}
		return obj{"metadata": obj{"name": name}, "status": st}
	}
	apps := map[string]*faultApp{
		"live": {name: "live"}, "dead": {name: "dead", dead: true},
		"down": {name: "down", down: true, downSince: at(0)},
	}
	fw := &fleetWatch{apps: apps, watchers: []*framework.Watcher{
		framework.RecordedWatcher("sr", []framework.WatchEvent{
			// before the fault
			{Kind: "sr", Type: "MODIFIED", Obj: sr("live", "False", "PortNotListening"), RV: 1, At: at(-2 * time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("dead", "False", "PortNotListening", "r1", micro(-time.Hour), "2026-12-05T10:00:00Z"), RV: 2, At: at(-time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("live", "True", "Serving", "r1", micro(-time.Minute), ""), RV: 3, At: at(-time.Second)},
			// during it
			{Kind: "sr", Type: "MODIFIED", Obj: sr("live", "True", "Serving"), RV: 4, At: at(time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("dead", "True", "VerifyingPorts"), RV: 5, At: at(2 * time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("live", "False", "Progressing"), RV: 6, At: at(3 * time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("down", "True", "Serving", "r1", micro(-time.Second), ""), RV: 7, At: at(3 * time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("down", "False", "Progressing"), RV: 8, At: at(4 * time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("down", "True", "Serving", "r1", micro(4*time.Second), ""), RV: 9, At: at(5 * time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("dead", "False", "PortNotListening", "r1", micro(-time.Hour), "2026-12-05T10:05:00Z"), RV: 10, At: at(6 * time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("live", "True", "Serving", "r1", micro(-2*time.Minute), ""), RV: 11, At: at(7 * time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("live", "True", "Serving", "r2", micro(-3*time.Minute), ""), RV: 12, At: at(8 * time.Second)}, // a new revision
		}...),
		framework.RecordedWatcher("service", []framework.WatchEvent{
			{Kind: "service", Type: "MODIFIED", Obj: obj{"metadata": obj{"name": "live"}}, RV: 13, At: at(4 * time.Second)},
			{Kind: "service", Type: "DELETED", Obj: obj{"metadata": obj{"name": "live"}}, RV: 14, At: at(5 * time.Second)},
			{Kind: "service", Type: "DELETED", Obj: obj{"metadata": obj{"name": "dead"}}, RV: 15, At: at(time.Minute)}, // after it
		}...),
	}}
	routes := []routeAnswer{{app: "live", kind: notApp}, {app: "live", kind: noPage}, {app: "live", kind: pageForApp}, {app: "down", kind: pageForApp}}
	r := fw.row("fault", start, at(10*time.Second), time.Second, routes, false, map[string]bool{"down": true})
	got := [7]int{r.deletions, r.falseHealthy, r.flaps, r.windowsAgain, r.routeFailures, r.noPage, r.pages}
	if want := [7]int{1, 2, 2, 2, 3, 1, 1}; got != want {
		t.Errorf("deletions, false-healthy, flaps, windows again, route failures, 5xx without the page, pages of moved apps = %v, want %v\n%s", got, want, strings.Join(r.details, "\n"))
	}
	// With page servers killed, a 5xx without the page is counted, not
	// failed; every other answer still fails (the branded page for "/"
	// of an app the fault did not move, too).
	if r := fw.row("fault", start, at(10*time.Second), time.Second, routes, true, nil); r.routeFailures != 3 || r.noPage != 1 {
		t.Errorf("page servers killed: route failures %d, 5xx without the page %d, want 3 and 1", r.routeFailures, r.noPage)
	}
}

// TestRouteAnswers: the route probe takes the app's answers and
// stackdome's page for its 503, tells the branded page for "/" and an
// app's 503 with Traefik's text apart, and takes nothing else.
func TestRouteAnswers(t *testing.T) {
	page := "<!doctype html><title>503 Service Unavailable</title>"
	for _, c := range []struct {
		path string
		code int
		body string
		ok   bool
		kind answerKind
	}{
		{"/", 200, "app-0-x port 8080\n", true, notApp},
		{"/", 503, page, false, pageForApp},
		{"/", 404, "404 page not found\n", false, notApp}, // Traefik's: no router
		{"/", 502, "Bad Gateway", false, notApp},
		{"/status/503", 503, "app-0-x port 8080 status 503\n", true, notApp},
		{"/status/503", 503, page, true, notApp},
		{"/status/503", 503, "Bad Gateway", false, noPage}, // the page server refused
		{"/status/503", 502, "Bad Gateway", false, notApp},
	} {
		kind, err := classifyAnswer(c.path, c.code, c.body, nil)
		if (err == nil) != c.ok || kind != c.kind {
			t.Errorf("%s %d %q: %v, kind %d, want ok %v, kind %d", c.path, c.code, c.body, err, kind, c.ok, c.kind)
		}
	}
}
