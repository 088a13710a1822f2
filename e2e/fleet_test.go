//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"github.com/stackdome/stackdome/e2e/framework"
	"github.com/stackdome/stackdome/internal/loopback"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestFleet is the fleet benchmark (`make bench-fleet`, docs/performance.md
// "Fleet"): N StackResources, half private (two ports), half public (a host,
// a public port and a private one, with the chart's error pages wired), under
// the real Metacontroller and two stackdome replicas, from creation to every
// one Converged, then a quiet minute. It runs only with STACKDOME_FLEET_N set
// (`make e2e` skips it): it takes minutes, and the suite's Service range (a
// part of the test host's /24) holds too few Services, so a fleet run gives
// the cluster a range of its own (fleetServiceRange) that nothing dials.
//
// STACKDOME_FLEET_MC=production runs Metacontroller as its StatefulSet does
// (its defaults: --client-go-qps=5, --client-go-burst=10, --workers=5);
// raised restarts it in its pod with fleetRaisedFlags appended.
// STACKDOME_FLEET_SECRETS=n then measures the Secret cache: n Secrets of 100
// KiB in another namespace, Metacontroller's RSS before and after the first
// StackResource with a secretRef.
//
// What it reports (t.Log, one line each, "fleet:"): the time to every
// Deployment and to every Converged, the writes per app by kind read from a
// watch of the namespace (children created and updated, status writes),
// stackdome's CPU per sync (its processes' /proc utime+stime over the syncs
// its metrics count) and RSS, Metacontroller's RSS. It fails when a status or
// child write happens in the quiet minute after convergence (every app is
// resynced in it: the chart's resyncPeriodSeconds is 60), or when a child is
// written twice.
//
// Pods: the stand-in kubelet (fleetKubelet) binds each new pod and reports it
// Running and Ready on one of four test-host addresses, which listen on the
// declared ports: several pods share an address, as nothing but stackdome's
// verifier dials them.
func TestFleet(t *testing.T) {
	n := fleetN()
	if n == 0 {
		t.Skip("STACKDOME_FLEET_N is not set: the fleet benchmark runs with make bench-fleet")
	}
	mode := os.Getenv("STACKDOME_FLEET_MC")
	if mode == "" {
		mode = "production"
	}
	requireStackResourceCRD(t)
	host := requireHost(t)
	ctx := t.Context()
	k := suite.cluster.Kube
	t.Logf("fleet: N=%d, Metacontroller %s, load average %s", n, mode, loadAverage())
	// Minutes pass between the figures: every 30 s a line says which
	// phase is under way and how far it is.
	progress := framework.NewProgress("fleet", framework.ProgressEvery, func(l string) { t.Log(l) })
	defer progress.Stop()

	if mode == "raised" {
		progress.Step("restarting Metacontroller with raised limits", nil)
		if err := suite.mc.Restart(t.Context(), suite.kubelet, fleetRaisedFlags); err != nil {
			t.Fatal(err)
		}
	} else if mode != "production" {
		t.Fatalf("STACKDOME_FLEET_MC=%q: production or raised", mode)
	}
	t.Logf("fleet: %s", suite.mc)

	// The chart with its two replicas of stackdome on the test host
	// (startReplicas) behind its hooks Service.
	relNS := newNamespace(t)
	const release = "stackdome"
	progress.Step("installing the chart", nil)
	if out, err := helm(ctx, "install", release, suiteChart(), "--namespace", relNS, "--timeout", "2m",
		"--set", "replicaCount=2", "--set", "podCIDRs={"+host.Prefix.String()+"}"); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	flags := []string{"--error-service-name", release + "-error-pages", "--error-service-namespace", relNS,
		"--dial-allow", host.Prefix.String()}
	profiles := fleetProfileDir()
	var perIP []func(ip string) []string
	if profiles != "" {
		perIP = append(perIP, func(ip string) []string { return []string{"--pprof-listen", net.JoinHostPort(ip, fleetPprofPort)} })
	}
	progress.Step("starting stackdome's two replicas", nil)
	flags = append(flags, hooksTLSFlags(t, relNS, release)...)
	replicaIPs, replicas, chartPods := startReplicas(t, host, release, relNS, flags, perIP...)
	for i, ip := range replicaIPs {
		suite.kubelet.RunPod(t, relNS, chartPods[i], ip)
	}
	for _, ip := range replicaIPs {
		waitReadyAddress(t, relNS, release, ip)
	}
	t.Logf("fleet: stackdome replicas in the chart's environment: %s", strings.Join(chartEnv(t, chartPods[0]), " "))

	// The apps' pods: four addresses listening on the declared ports.
	var podIPs []string
	for i := range 4 {
		ip := framework.HostAddr(host, byte(100+i))
		if err := host.AddAddress(netip.MustParseAddr(ip)); err != nil {
			t.Fatal(err)
		}
		for _, port := range []string{"8080", "9090"} {
			l, err := host.Listen(net.JoinHostPort(ip, port))
			if err != nil {
				t.Fatal(err)
			}
			loopback.Serve(t, l)
		}
		podIPs = append(podIPs, ip)
	}

	ns := newNamespace(t)
	w := watchNamespace(t, ns)
	kl := startFleetKubelet(t, ns, podIPs)
	syncs := startSyncCounter(t)

	// What the replicas take with nothing to answer (the kubelet's probes,
	// the runtime), to tell from what the syncs take.
	progress.Step(fmt.Sprintf("measuring stackdome's idle CPU for %s", fleetIdle), nil)
	idle0, idleFrom := procCPU(t, replicas), time.Now()
	time.Sleep(fleetIdle)
	idle := (procCPU(t, replicas) - idle0) / time.Since(idleFrom).Seconds()
	t.Logf("fleet: stackdome idle: %.2f ms of CPU a second over both replicas", 1000*idle)

	cpu0 := procCPU(t, replicas)
	sync0 := replicaSyncs(t, replicaIPs)
	stopProfiling := profileReplicas(t, profiles, mode+"-converge", replicaIPs)
	start := time.Now()
	names := make([]string, n)
	work := make(chan int)
	var wg sync.WaitGroup
	var createdApps atomic.Int64
	progress.Step("creating apps", func() string { return fmt.Sprintf("%d of %d created", createdApps.Load(), n) })
	for range 8 {
		wg.Go(func() {
			for i := range work {
				if _, err := k.Create(ctx, "/apis/stackdome.io/v1alpha1/namespaces/"+ns+"/stackresources", fleetApp(i)); err != nil {
					t.Errorf("creating app %d: %v", i, err)
				}
				createdApps.Add(1)
			}
		})
	}
	for i := range n {
		names[i] = fleetAppName(i)
		work <- i
	}
	close(work)
	wg.Wait()
	created := time.Since(start)

	// Until every Deployment exists and every app is Converged.
	var tDeployments, tConverged time.Duration
	progress.Step("converging", func() string {
		deps, conv := fleetProgress(w)
		return fmt.Sprintf("%d of %d apps Converged, %d of %d Deployments", conv, n, deps, n)
	})
	deadline := start.Add(time.Duration(n)*3*time.Second + 5*time.Minute)
	for tConverged == 0 {
		if err := suite.mc.Healthy(); err != nil {
			t.Fatal(err)
		}
		deps, conv := fleetProgress(w)
		if tDeployments == 0 && deps >= n {
			tDeployments = time.Since(start)
		}
		if conv >= n {
			tConverged = time.Since(start)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fleet: after %s, %d of %d Deployments, %d of %d apps Converged; Metacontroller's last lines:\n%s",
				time.Since(start).Round(time.Second), deps, n, conv, n, framework.Indent(suite.mc.Proc.Tail(20)))
		}
		time.Sleep(time.Second)
	}
	cpu1 := procCPU(t, replicas)
	sync1 := replicaSyncs(t, replicaIPs)
	stopProfiling()
	rss := procRSS(t, replicas)
	mcRSS := procRSS(t, []*framework.Proc{suite.mc.Proc})
	mark := w.mark()
	t.Logf("fleet: N=%d created in %s; every Deployment after %s, every app Converged after %s (from the first create)",
		n, created.Round(100*time.Millisecond), tDeployments.Round(100*time.Millisecond), tConverged.Round(100*time.Millisecond))
	dSyncs := sync1 - sync0
	t.Logf("fleet: stackdome answered %d syncs (%.1f per app; %d hook calls through the proxy, %d failed); CPU %.2f s over both replicas: %.2f ms per sync, %.2f net of idle",
		dSyncs, float64(dSyncs)/float64(n), syncs.calls(), syncs.failed(), cpu1-cpu0, 1000*(cpu1-cpu0)/float64(max(dSyncs, 1)),
		1000*(cpu1-cpu0-idle*tConverged.Seconds())/float64(max(dSyncs, 1)))
	t.Logf("fleet: RSS stackdome %s (peak %s); Metacontroller %s (peak %s); pods bound %d",
		rss.String(), rss.peakString(), mcRSS.String(), mcRSS.peakString(), kl.count())
	for _, ip := range replicaIPs {
		t.Logf("fleet: stackdome %s metrics: %s", ip, replicaProcessMetrics(t, ip))
	}
	reportFleetWrites(t, w, names, 0)

	// The quiet minute: every app resynced once, nothing written.
	progress.Step("the quiet minute", nil)
	quietFrom := time.Now()
	qcpu0, qsync0 := procCPU(t, replicas), replicaSyncs(t, replicaIPs)
	stopProfiling = profileReplicas(t, profiles, mode+"-quiet", replicaIPs)
	time.Sleep(65 * time.Second)
	qcpu1, qsync1 := procCPU(t, replicas), replicaSyncs(t, replicaIPs)
	stopProfiling()
	var status, children int
	for _, name := range names {
		ws := w.writesOf(mark, name)
		status += ws.statusWrites
		children += len(ws.created) + len(ws.updated) + len(ws.deleted)
		if !ws.none() {
			t.Errorf("fleet: quiet minute: %s: %s", name, ws)
		}
	}
	quiet := time.Since(quietFrom)
	t.Logf("fleet: quiet minute (%s): %d syncs answered, %d status writes, %d child writes; CPU %.2f s over both replicas: %.2f ms per sync, %.2f net of idle",
		quiet.Round(time.Second), qsync1-qsync0, status, children, qcpu1-qcpu0, 1000*(qcpu1-qcpu0)/float64(max(qsync1-qsync0, 1)),
		1000*(qcpu1-qcpu0-idle*quiet.Seconds())/float64(max(qsync1-qsync0, 1)))
	if errs := w.errors(); len(errs) > 0 {
		t.Errorf("watch: %v", errs)
	}

	if s := fleetSecrets(); s > 0 {
		measureSecretCache(t, ns, s, progress)
	}
}

// fleetRaisedFlags are the raised limits docs/install.md recommends for a
// fleet: Metacontroller's client rate and its workers.
var fleetRaisedFlags = []string{"--client-go-qps=100", "--client-go-burst=200", "--workers=20"}

// fleetN is STACKDOME_FLEET_N, 0 when unset.
func fleetN() int {
	n, _ := strconv.Atoi(os.Getenv("STACKDOME_FLEET_N"))
	return n
}

// fleetIdle is how long the replicas' idle CPU is read before the apps are
// created.
const fleetIdle = 20 * time.Second

// fleetProfileDir is STACKDOME_FLEET_PROFILE: where the replicas' CPU
// profiles go ("": none are taken).
func fleetProfileDir() string { return os.Getenv("STACKDOME_FLEET_PROFILE") }

// fleetPprofPort is the replicas' --pprof-listen port in a profiled run.
const fleetPprofPort = "6060"

// fleetProfileWindow is one CPU profile's length: the last one started
// before the phase ends is let finish, so a phase is profiled at most this
// much past its end.
const fleetProfileWindow = 5 * time.Second

// profileReplicas takes CPU profiles of each replica (its /debug/pprof/profile
// on --pprof-listen), one window after another, into dir/<phase>-<ip>-<n>.pb.gz
// until the returned function is called; that function waits for the last
// windows, logs where the files are and the top of their merged profile
// (go tool pprof -top, every replica and window together). With dir empty
// it does nothing.
func profileReplicas(t *testing.T, dir, phase string, ips []string) func() {
	t.Helper()
	if dir == "" {
		return func() {}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var files []string
	for _, ip := range ips {
		wg.Go(func() {
			client := &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: fleetProfileWindow + 30*time.Second}
			url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", net.JoinHostPort(ip, fleetPprofPort), int(fleetProfileWindow/time.Second))
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := client.Get(url)
				if err != nil {
					t.Errorf("profiling %s: %v", ip, err)
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Errorf("profiling %s: %d %v %.200s", ip, resp.StatusCode, err, b)
					return
				}
				file := filepath.Join(dir, fmt.Sprintf("%s-%s-%03d.pb.gz", phase, ip, n))
				if err := os.WriteFile(file, b, 0o644); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				files = append(files, file)
				mu.Unlock()
			}
		})
	}
	return func() {
		close(stop)
		wg.Wait()
		if len(files) == 0 {
			return
		}
		out, err := exec.Command("go", append([]string{"tool", "pprof", "-top", "-nodecount=40"}, files...)...).CombinedOutput()
		if err != nil {
			t.Errorf("go tool pprof: %v\n%s", err, out)
		}
		t.Logf("fleet: CPU profiles (%s): %d windows of %s in %s/%s-*.pb.gz; go tool pprof -top of them all:\n%s",
			phase, len(files), fleetProfileWindow, dir, phase, out)
	}
}

func fleetSecrets() int {
	n, _ := strconv.Atoi(os.Getenv("STACKDOME_FLEET_SECRETS"))
	return n
}

// fleetServiceRange is the Service range of a fleet run ("" otherwise): a
// /16, 65,534 Services, that no test dials (the hooks are reached through
// the cluster-network stand-in by name, the error-page ClusterIP is only
// written into the apps' mirrored EndpointSlices, and the kubernetes
// Service's address answers inside Metacontroller's pod sandbox alone).
func fleetServiceRange() string {
	if fleetN() == 0 {
		return ""
	}
	return "10.214.0.0/16"
}

func fleetAppName(i int) string {
	if i%2 == 1 {
		return fmt.Sprintf("web-%04d", i)
	}
	return fmt.Sprintf("api-%04d", i)
}

// fleetApp is app i: even ones private (http, metrics), odd ones public (a
// host, http public, metrics private).
func fleetApp(i int) obj {
	name := fleetAppName(i)
	spec := obj{"type": "Service", "image": "example.invalid/fleet/" + name + ":1",
		"ports": []any{obj{"name": "http", "port": 8080}, obj{"name": "metrics", "port": 9090}}}
	if i%2 == 1 {
		spec["host"] = name + ".fleet.example.com"
		spec["ports"] = []any{obj{"name": "http", "port": 8080, "public": true}, obj{"name": "metrics", "port": 9090}}
	}
	return obj{"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource", "metadata": obj{"name": name}, "spec": spec}
}

// fleetProgress counts, from the watch, the Deployments created and the
// apps whose last seen status says Converged=True.
func fleetProgress(w *nsWatch) (deployments, converged int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	deps := map[string]bool{}
	conv := map[string]bool{}
	for _, e := range w.events {
		name := fmt.Sprint(framework.Dig(e.object, "metadata", "name"))
		switch e.resource {
		case "deployments":
			if e.typ == "ADDED" {
				deps[name] = true
			}
		case "stackresources":
			conv[name] = framework.Dig(condition(e.object, "Converged"), "status") == "True"
		}
	}
	for _, c := range conv {
		if c {
			converged++
		}
	}
	return len(deps), converged
}

// reportFleetWrites logs the writes per app from mark on, by kind, for the
// private and the public apps, and fails on a child written more than once.
func reportFleetWrites(t *testing.T, w *nsWatch, names []string, mark int) {
	t.Helper()
	type tally struct {
		apps    int
		created map[string]int
		updated map[string]int
		deleted int
		status  int
		writes  []int // writes per app, for the spread
	}
	by := map[string]*tally{}
	for _, name := range names {
		class := "private"
		if strings.HasPrefix(name, "web-") {
			class = "public"
		}
		tl := by[class]
		if tl == nil {
			tl = &tally{created: map[string]int{}, updated: map[string]int{}}
			by[class] = tl
		}
		ws := w.writesOf(mark, name)
		tl.apps++
		seen := map[string]int{}
		for _, c := range ws.created {
			tl.created[strings.SplitN(c, "/", 2)[0]]++
			seen[c]++
		}
		for _, c := range ws.updated {
			tl.updated[strings.SplitN(c, "/", 2)[0]]++
			seen[c]++
		}
		for c, k := range seen {
			// Every child once, a new app's route included: it is
			// created referring to its Middlewares
			// (hooks/internal/children/wiring.go).
			if k > 1 {
				t.Errorf("fleet: %s: %s written %d times (%s)", name, c, k, ws)
			}
		}
		tl.deleted += len(ws.deleted)
		tl.status += ws.statusWrites
		tl.writes = append(tl.writes, len(ws.created)+len(ws.updated)+len(ws.deleted)+ws.statusWrites)
	}
	for _, class := range []string{"private", "public"} {
		tl := by[class]
		if tl == nil {
			continue
		}
		per := func(m map[string]int) string {
			var ks []string
			for k := range m {
				ks = append(ks, k)
			}
			sort.Strings(ks)
			var parts []string
			for _, k := range ks {
				parts = append(parts, fmt.Sprintf("%s %.2f", k, float64(m[k])/float64(tl.apps)))
			}
			return strings.Join(parts, ", ")
		}
		sort.Ints(tl.writes)
		total := 0
		for _, x := range tl.writes {
			total += x
		}
		t.Logf("fleet: %s apps (%d): writes per app %.2f (min %d, max %d): created {%s}, updated {%s}, deleted %.2f, status %.2f",
			class, tl.apps, float64(total)/float64(tl.apps), tl.writes[0], tl.writes[len(tl.writes)-1],
			per(tl.created), per(tl.updated), float64(tl.deleted)/float64(tl.apps), float64(tl.status)/float64(tl.apps))
	}
}

// fleetKubelet binds every new pod of a namespace and reports it Running
// and Ready at one of ips, in turn. It lists the namespace's unbound pods
// (fieldSelector spec.nodeName=) twice a second.
type fleetKubelet struct {
	mu    sync.Mutex
	bound int
}

func (kl *fleetKubelet) count() int {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	return kl.bound
}

func startFleetKubelet(t *testing.T, ns string, ips []string) *fleetKubelet {
	t.Helper()
	suite.kubelet.RequireNode(t)
	kl := &fleetKubelet{}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	k := suite.cluster.Kube
	run := func(pod obj, ip string) {
		name := fmt.Sprint(framework.Dig(pod, "metadata", "name"))
		if _, err := k.Create(ctx, "/api/v1/namespaces/"+ns+"/pods/"+name+"/binding", obj{
			"apiVersion": "v1", "kind": "Binding", "metadata": obj{"name": name},
			"target": obj{"apiVersion": "v1", "kind": "Node", "name": framework.TestNode},
		}); err != nil {
			if ctx.Err() == nil && !framework.IsCode(err, 409) {
				t.Errorf("binding pod %s: %v", name, err)
			}
			return
		}
		if _, err := k.MergePatch(ctx, "/api/v1/namespaces/"+ns+"/pods/"+name+"/status", framework.ReadyStatus(pod, ip, "")); err != nil && ctx.Err() == nil {
			t.Errorf("pod %s ready: %v", name, err)
		}
		kl.mu.Lock()
		kl.bound++
		kl.mu.Unlock()
	}
	go func() {
		next := 0
		for ctx.Err() == nil {
			l, err := k.Get(ctx, "/api/v1/namespaces/"+ns+"/pods?fieldSelector="+url.QueryEscape("spec.nodeName="))
			items, _ := l["items"].([]any)
			if err == nil && len(items) > 0 {
				var wg sync.WaitGroup
				sem := make(chan struct{}, 8)
				for _, it := range items {
					pod := it.(map[string]any)
					if framework.Dig(pod, "metadata", "deletionTimestamp") != nil {
						continue
					}
					ip := ips[next%len(ips)]
					next++
					sem <- struct{}{}
					wg.Go(func() { defer func() { <-sem }(); run(pod, ip) })
				}
				wg.Wait()
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	return kl
}

// syncCounter keeps the count of the hook calls through the cluster-network
// stand-in and drops what it records of each (a fleet's requests would
// fill the memory otherwise).
type syncCounter struct {
	mu      sync.Mutex
	n, fail int
}

func (s *syncCounter) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *syncCounter) failed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fail
}

func startSyncCounter(t *testing.T) *syncCounter {
	s := &syncCounter{}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	cn := suite.mc.Net
	drain := func() {
		ex := cn.Drain()
		s.mu.Lock()
		for _, e := range ex {
			if e.Path() == "/sync" {
				s.n++
				if e.Status != http.StatusOK {
					s.fail++
				}
			}
		}
		s.mu.Unlock()
	}
	drain()
	s.n, s.fail = 0, 0
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				drain()
			}
		}
	}()
	return s
}

// procCPU is the CPU seconds (utime+stime) the processes have used.
func procCPU(t *testing.T, ps []*framework.Proc) float64 {
	t.Helper()
	var ticks float64
	for _, p := range ps {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Pid()))
		if err != nil {
			t.Fatal(err)
		}
		// The fields after the command name (which may hold spaces).
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
		u, _ := strconv.ParseFloat(f[11], 64)
		s, _ := strconv.ParseFloat(f[12], 64)
		ticks += u + s
	}
	return ticks / 100 // USER_HZ
}

type rssOf struct{ rss, hwm []int } // KiB, one a process

func (r rssOf) String() string     { return kib(r.rss) }
func (r rssOf) peakString() string { return kib(r.hwm) }

func kib(v []int) string {
	var parts []string
	for _, x := range v {
		parts = append(parts, fmt.Sprintf("%.0f MiB", float64(x)/1024))
	}
	return strings.Join(parts, " + ")
}

// procRSS reads VmRSS and VmHWM of each process, checking it is the binary
// meant (the sandbox's nsenter, unshare and sh exec it).
func procRSS(t *testing.T, ps []*framework.Proc) rssOf {
	t.Helper()
	var r rssOf
	for _, p := range ps {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Pid()))
		if err != nil {
			t.Fatal(err)
		}
		var rss, hwm int
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) >= 2 && f[0] == "VmRSS:":
				rss, _ = strconv.Atoi(f[1])
			case len(f) >= 2 && f[0] == "VmHWM:":
				hwm, _ = strconv.Atoi(f[1])
			case len(f) >= 2 && f[0] == "Name:" && f[1] != "stackdome" && f[1] != "metacontroller":
				t.Errorf("pid %d is %s, not the process measured", p.Pid(), f[1])
			}
		}
		r.rss, r.hwm = append(r.rss, rss), append(r.hwm, hwm)
	}
	return r
}

// replicaSyncs sums stackdome_hook_requests_total{hook="sync"} of the
// replicas' metrics.
func replicaSyncs(t *testing.T, ips []string) int {
	t.Helper()
	total := 0
	for _, ip := range ips {
		for _, line := range scrape(t, ip) {
			if strings.HasPrefix(line, "stackdome_hook_requests_total{") && strings.Contains(line, `hook="sync"`) {
				f := strings.Fields(line)
				v, _ := strconv.ParseFloat(f[len(f)-1], 64)
				total += int(v)
			}
		}
	}
	return total
}

// replicaProcessMetrics is what a replica's own metrics say of its CPU and
// memory.
func replicaProcessMetrics(t *testing.T, ip string) string {
	var out []string
	for _, line := range scrape(t, ip) {
		for _, m := range []string{"process_cpu_seconds_total ", "process_resident_memory_bytes ", "go_memstats_heap_inuse_bytes "} {
			if strings.HasPrefix(line, m) {
				out = append(out, line)
			}
		}
	}
	return strings.Join(out, ", ")
}

// metricsClient reaches the replicas directly, whatever HTTP_PROXY says.
var metricsClient = &http.Client{Transport: &http.Transport{Proxy: nil}, Timeout: 10 * time.Second}

func scrape(t *testing.T, ip string) []string {
	t.Helper()
	resp, err := metricsClient.Get("http://" + net.JoinHostPort(ip, "8081") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	return lines
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return err.Error()
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// measureSecretCache puts n Secrets of 100 KiB in a namespace of their own,
// then creates the first StackResource with a secretRef (to a small Secret
// of its namespace), and reads Metacontroller's RSS before and after its
// related Secret informer has listed them.
func measureSecretCache(t *testing.T, ns string, n int, progress *framework.Progress) {
	t.Helper()
	ctx := t.Context()
	k := suite.cluster.Kube
	other := newNamespace(t)
	blob := strings.Repeat("x", 100<<10)
	work := make(chan int)
	var wg sync.WaitGroup
	var created atomic.Int64
	progress.Step("Secret cache: creating Secrets of 100 KiB", func() string { return fmt.Sprintf("%d of %d", created.Load(), n) })
	for range 4 {
		wg.Go(func() {
			for i := range work {
				if _, err := k.Create(ctx, "/api/v1/namespaces/"+other+"/secrets", obj{"apiVersion": "v1", "kind": "Secret",
					"metadata": obj{"name": fmt.Sprintf("release-v%d", i)}, "stringData": obj{"release": blob}}); err != nil {
					t.Errorf("secret %d: %v", i, err)
				}
				created.Add(1)
			}
		})
	}
	for i := range n {
		work <- i
	}
	close(work)
	wg.Wait()
	progress.Step("Secret cache: waiting for an app using a Secret to converge", nil)
	time.Sleep(10 * time.Second)
	before := procRSS(t, []*framework.Proc{suite.mc.Proc})
	if _, err := k.Create(ctx, "/api/v1/namespaces/"+ns+"/secrets", obj{"apiVersion": "v1", "kind": "Secret",
		"metadata": obj{"name": "db"}, "stringData": obj{"password": "x"}}); err != nil {
		t.Fatal(err)
	}
	app := fleetApp(0)
	app["metadata"] = obj{"name": "uses-secret"}
	app["spec"].(obj)["envFrom"] = []any{obj{"secretRef": obj{"name": "db"}}}
	start := time.Now()
	if _, err := k.Create(ctx, "/apis/stackdome.io/v1alpha1/namespaces/"+ns+"/stackresources", app); err != nil {
		t.Fatal(err)
	}
	if err := framework.WaitUntil(3*time.Minute, time.Second, "uses-secret Converged", func() (bool, error) {
		r, err := k.Get(ctx, stackPath(ns, "uses-secret"))
		if err != nil {
			return false, err
		}
		return framework.Dig(condition(r, "Converged"), "status") == "True", fmt.Errorf("status %s", mustJSON(r["status"]))
	}); err != nil {
		t.Fatal(err)
	}
	converged := time.Since(start)
	time.Sleep(20 * time.Second)
	after := procRSS(t, []*framework.Proc{suite.mc.Proc})
	mib := float64(n) * 100 / 1024
	t.Logf("fleet: Secret cache: %d Secrets of 100 KiB (%.0f MiB) in %s; Metacontroller RSS %s before the first secretRef, %s after (peak %s; Converged after %s): +%.0f MiB, %.1f× the Secrets' bytes",
		n, mib, other, before, after, after.peakString(), converged.Round(100*time.Millisecond),
		float64(after.rss[0]-before.rss[0])/1024, float64(after.rss[0]-before.rss[0])/1024/mib)
}
