//go:build e2e

package node

import (
	"fmt"
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
	flaps, routeFailures    int
	reconverge              time.Duration
	details                 []string
}

// fleetWatch watches the fleet's StackResources and every kind of child
// stackdome makes in its namespace.
type fleetWatch struct {
	apps     map[string]faultApp
	watchers []*watcher
}

// childKinds are the collections of the children stackdome makes for a
// Service or StatefulService (docs/reference.md): a DELETED event of any
// is a deletion.
var childKinds = map[string]string{
	"deployment":  "/apis/apps/v1/namespaces/%s/deployments",
	"statefulset": "/apis/apps/v1/namespaces/%s/statefulsets",
	"service":     "/api/v1/namespaces/%s/services",
	"route":       "/apis/traefik.io/v1alpha1/namespaces/%s/ingressroutes",
	"middleware":  "/apis/traefik.io/v1alpha1/namespaces/%s/middlewares",
	"pdb":         "/apis/policy/v1/namespaces/%s/poddisruptionbudgets",
	"policy":      "/apis/networking.k8s.io/v1/namespaces/%s/networkpolicies",
}

func watchFleet(t *testing.T, ns string, apps []faultApp) *fleetWatch {
	f := &fleetWatch{apps: map[string]faultApp{}}
	for _, a := range apps {
		f.apps[a.name] = a
	}
	f.watchers = append(f.watchers, watchPath(t, "sr", srPath(ns, "")))
	for kind, path := range childKinds {
		f.watchers = append(f.watchers, watchPath(t, kind, fmt.Sprintf(path, ns)))
	}
	return f
}

// row reads the events received from start to end.
func (f *fleetWatch) row(name string, start, end time.Time, took time.Duration, routes []string) faultRow {
	r := faultRow{fault: name, apps: len(f.apps), reconverge: took, routeFailures: len(routes)}
	for _, e := range merged(f.watchers...) {
		if e.At.Before(start) || !e.At.Before(end) {
			continue
		}
		what := fmt.Sprintf("rv %d %s %s %v", e.RV, e.Type, e.Kind, framework.Dig(e.Obj, "metadata", "name"))
		if e.Kind != "sr" {
			if e.Type == "DELETED" {
				r.deletions++
				r.details = append(r.details, what)
			}
			continue
		}
		a, ok := f.apps[fmt.Sprint(framework.Dig(e.Obj, "metadata", "name"))]
		c := srCondition(e.Obj, "Available")
		if !ok || c == nil {
			continue
		}
		if a.dead && c["status"] == "True" {
			r.falseHealthy++
			r.details = append(r.details, fmt.Sprintf("%s: Available=True %v with port 9090 dead", what, c["reason"]))
		}
		want := [2]any{"True", "Serving"}
		if a.dead {
			want = [2]any{"False", "PortNotListening"}
		}
		if got := [2]any{c["status"], c["reason"]}; got != want {
			r.flaps++
			r.details = append(r.details, fmt.Sprintf("%s: Available %v %v, settled at %v %v", what, got[0], got[1], want[0], want[1]))
		}
	}
	r.details = append(r.details, routes...)
	return r
}

func formatFaultTable(rows []faultRow) string {
	var b strings.Builder
	b.WriteString("| fault | apps | deletions | false-healthy moments | flaps | route failures | time to reconverge |\n|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %s |\n", r.fault, r.apps, r.deletions, r.falseHealthy, r.flaps, r.routeFailures, r.reconverge.Round(100*time.Millisecond))
	}
	return b.String()
}

// routeProbe asks Traefik for every public app, one after another, the
// whole run, and keeps every answer that is not the app's own.
type routeProbe struct {
	mu    sync.Mutex
	asked int
	fails []string
}

func startRouteProbe(t *testing.T, apps []faultApp) *routeProbe {
	p := &routeProbe{}
	var hosts []string
	for _, a := range apps {
		if a.public {
			hosts = append(hosts, a.host())
		}
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
			host := hosts[i%len(hosts)]
			code, body, err := throughTraefik(t.Context(), host, "/")
			p.mu.Lock()
			p.asked++
			if err != nil || code != 200 || !strings.Contains(body, "port 8080") {
				p.fails = append(p.fails, fmt.Sprintf("%s %s: %d %q %v", time.Now().Format(time.TimeOnly), host, code, clip(body, 200), err))
			}
			p.mu.Unlock()
		}
	}()
	return p
}

func (p *routeProbe) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked, p.fails = 0, nil
}

// failures are the answers since the last reset that were not the app's.
func (p *routeProbe) failures() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.fails...)
}

// TestFaultRowCounts: a fault's row counts what it is for, from the events
// received while the fault lasted and nothing else: a child deleted, a
// dead-port app read Available=True (both a false-healthy moment and a
// flap), a live app leaving Serving, a route failure.
func TestFaultRowCounts(t *testing.T) {
	start := time.Now()
	at := func(d time.Duration) time.Time { return start.Add(d) }
	sr := func(name, status, reason string) obj {
		return obj{"metadata": obj{"name": name}, "status": obj{"conditions": []any{obj{"type": "Available", "status": status, "reason": reason}}}}
	}
	f := &fleetWatch{apps: map[string]faultApp{"live": {name: "live"}, "dead": {name: "dead", dead: true}}, watchers: []*watcher{
		{kind: "sr", events: []event{
			{Kind: "sr", Type: "MODIFIED", Obj: sr("live", "False", "PortNotListening"), RV: 1, At: at(-time.Second)}, // before the fault
			{Kind: "sr", Type: "MODIFIED", Obj: sr("live", "True", "Serving"), RV: 2, At: at(time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("dead", "True", "VerifyingPorts"), RV: 3, At: at(2 * time.Second)},
			{Kind: "sr", Type: "MODIFIED", Obj: sr("live", "False", "Progressing"), RV: 4, At: at(3 * time.Second)},
		}},
		{kind: "service", events: []event{
			{Kind: "service", Type: "MODIFIED", Obj: obj{"metadata": obj{"name": "live"}}, RV: 5, At: at(4 * time.Second)},
			{Kind: "service", Type: "DELETED", Obj: obj{"metadata": obj{"name": "live"}}, RV: 6, At: at(5 * time.Second)},
			{Kind: "service", Type: "DELETED", Obj: obj{"metadata": obj{"name": "dead"}}, RV: 7, At: at(time.Minute)}, // after it
		}},
	}}
	r := f.row("fault", start, at(10*time.Second), time.Second, []string{"route"})
	got := [4]int{r.deletions, r.falseHealthy, r.flaps, r.routeFailures}
	if want := [4]int{1, 1, 2, 1}; got != want {
		t.Errorf("deletions, false-healthy, flaps, route failures = %v, want %v\n%s", got, want, strings.Join(r.details, "\n"))
	}
}
