//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestInstallDoc runs docs/install.md top to bottom: every shell block, in
// order, in one bash, against the suite's API server — kubectl (built from
// e2e/kubectl), bin/helm and curl, from the repository root. A block marked
// `e2e: substituted` runs its stand-in instead (installDocSubstitutions, in
// installdoc_blocks_test.go); a run block that fetches from the internet runs
// with only that replaced by the pinned local copy (installDocLocalCopies):
// Metacontroller's manifests/production and Traefik's chart 41.3.0. The
// cluster is the suite's control plane; Metacontroller is the real v4.17.2
// the suite runs (its syncs reach the chart's pods through the
// cluster-network stand-in). No image is pulled: the suite's kubelet
// stand-in, driven by docStandIns' loop, runs each pod on an address of the
// test host — Traefik's as the Traefik binary with the chart's arguments,
// stackdome's as the stackdome binary with the Deployments' own arguments,
// any other image as a listener on each containerPort answering like
// go-httpbin, the image the page's first app names (its index page at /, the
// status asked for at /status/<code>) — and a load-balancer stand-in gives
// Traefik's Service the test host's root-side address. The page's `curl`
// commands reach the real Traefik as written, and its branded-error-page
// step checks, through it, the page and the JSON envelope for the app's 503.
// The first block that fails fails the test, with its output and what the
// stand-ins saw.
func TestInstallDoc(t *testing.T) {
	steps, errs := readInstallDocSteps(suite.root)
	for _, err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
	requireHost(t)
	helmBin := filepath.Join(suite.root, "bin", "helm")
	if _, err := os.Stat(helmBin); err != nil {
		t.Fatalf("bin/helm (make tools): %v", err)
	}
	kubectlDir := filepath.Dir(suite.kubectl)
	if suite.traefikErr != nil {
		t.Fatal(suite.traefikErr)
	}
	host := suite.host
	suite.kubelet.RequireNode(t)

	d := &docRun{t: t, host: host}
	d.standIns = startDocStandIns(t, host, buildStackdome(t))
	t.Cleanup(d.cleanUp)

	home := t.TempDir()
	env := []string{}
	for _, e := range withoutClusterEnv(os.Environ()) {
		// Nothing the page runs may go through a proxy, off this machine.
		if k, _, _ := strings.Cut(e, "="); strings.EqualFold(k, "http_proxy") || strings.EqualFold(k, "https_proxy") || strings.EqualFold(k, "all_proxy") {
			continue
		}
		env = append(env, e)
	}
	env = append(env,
		"PATH="+kubectlDir+string(os.PathListSeparator)+filepath.Join(suite.root, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"KUBECONFIG="+suite.cluster.Kubeconfig,
		"HOME="+home,
		"HELM_CACHE_HOME="+filepath.Join(home, "helm", "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "helm", "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "helm", "data"),
		"E2E_POD_CIDR="+host.Prefix.String(),
		"E2E_METACONTROLLER_MANIFESTS="+filepath.Join(suite.mcDir, "src", "manifests", "production"),
		"E2E_TRAEFIK_CHART="+suite.traefikChart.Chart,
	)
	sh, err := startDocShell(env, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sh.stop)

	var run, substituted int
	start := time.Now()
	for _, s := range steps {
		text, what := s.text, "as written"
		switch {
		case s.sub != nil:
			what = "substituted: " + s.sub.why
			substituted++
		case len(s.copies) > 0:
			what = "as written, with the local copy of " + strings.Join(s.copies, "; ")
			run++
		default:
			run++
		}
		began := time.Now()
		out, err := sh.run(text, 6*time.Minute)
		t.Logf("%s — %s (%s)\n%s", s.block, what, time.Since(began).Round(100*time.Millisecond), framework.Indent(clip(out, 3000)))
		if err != nil {
			t.Fatalf("%s failed: %v\nthe block:\n%s\nstand-ins: %s", s.block, err, indentLines(s.block.text), d.standIns.report())
		}
	}
	t.Logf("%s: %d blocks run as written, %d substituted, in %s; the real Metacontroller synced %d times through the stand-in network; stand-ins: %s",
		installDoc, run, substituted, time.Since(start).Round(time.Second), suite.mc.Net.Count("/sync"), d.standIns.report())
}

// docRun is what a run of the page started.
type docRun struct {
	t        *testing.T
	host     *framework.TestHost
	standIns *docStandIns
}

// cleanUp leaves the cluster as the tests after this one expect it,
// whether the page ran to its end or not: the release and the page's
// namespaces gone (their pods deleted at once: no kubelet finishes them),
// and the StackResource CRD, which the page's last step deletes, served
// again.
func (d *docRun) cleanUp() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d.standIns.stop()
	k := suite.cluster.Kube
	if out, err := helm(ctx, "status", "stackdome", "--namespace", "stackdome"); err == nil {
		if out, err := helm(ctx, "uninstall", "stackdome", "--namespace", "stackdome"); err != nil {
			d.t.Errorf("helm uninstall: %v\n%s", err, out)
		}
	} else if !strings.Contains(string(out), "not found") {
		d.t.Logf("helm status: %v\n%s", err, out)
	}
	if out, err := helm(ctx, "status", "traefik", "--namespace", "traefik"); err == nil {
		if out, err := helm(ctx, "uninstall", "traefik", "--namespace", "traefik"); err != nil {
			d.t.Errorf("helm uninstall traefik: %v\n%s", err, out)
		}
	} else if !strings.Contains(string(out), "not found") {
		d.t.Logf("helm status traefik: %v\n%s", err, out)
	}
	namespaces := []string{"hello", "stackdome", "traefik"}
	for _, ns := range namespaces {
		if err := k.Do(ctx, "DELETE", "/api/v1/namespaces/"+ns, "", nil, nil); err != nil && !framework.IsCode(err, 404) {
			d.t.Errorf("deleting namespace %s: %v", ns, err)
		}
	}
	// Pods bound to the test node never finish deleting without a kubelet.
	err := framework.WaitUntil(time.Minute, 500*time.Millisecond, "the page's pods gone", func() (bool, error) {
		left := 0
		for _, ns := range namespaces {
			pods, err := suite.cluster.Kube.List(ctx, "/api/v1/namespaces/"+ns+"/pods", "")
			if err != nil {
				return false, err
			}
			for _, p := range pods {
				left++
				suite.kubelet.ForceDeletePod(ns, framework.Dig(p, "metadata", "name").(string))
			}
		}
		return left == 0, fmt.Errorf("%d pods left", left)
	})
	if err != nil {
		d.t.Error(err)
	}
	if err := restoreStackResourceCRD(ctx, k); err != nil {
		d.t.Errorf("serving the StackResource CRD again for the tests after this one: %v", err)
	}
	d.standIns.releaseAddresses()
}

// restoreStackResourceCRD installs schema/crd.yaml again once the page's
// `kubectl delete crd` has finished, if it ran.
func restoreStackResourceCRD(ctx context.Context, k *framework.Kube) error {
	err := framework.WaitUntil(time.Minute, 250*time.Millisecond, "the StackResource CRD deleted or kept", func() (bool, error) {
		o, err := k.Get(ctx, crdPath+"/"+stackCRDName)
		if framework.IsCode(err, 404) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return framework.Dig(o, "metadata", "deletionTimestamp") == nil, errors.New("being deleted")
	})
	if err != nil {
		return err
	}
	if _, err := k.Get(ctx, crdPath+"/"+stackCRDName); err == nil {
		return waitEstablished(ctx, k, stackCRDName)
	}
	_, err = installCRDFile(ctx, k, filepath.Join(suite.root, "schema", "crd.yaml"))
	return err
}

// docShell is one bash that runs the page's blocks one after another, so
// variables set by one block reach the next. `set -eo pipefail`: the first
// failing command ends the shell, and its ERR trap names the command.
type docShell struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	status *bufio.Reader // fd 3: one line after each block
	dir    string
	n      int
	out    lockedBuffer
	done   chan struct{}
	err    error // valid once done is closed
}

func startDocShell(env []string, dir string) (*docShell, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	s := &docShell{dir: dir, status: bufio.NewReader(r), done: make(chan struct{})}
	s.cmd = exec.Command("bash", "--noprofile", "--norc")
	s.cmd.Dir = suite.root
	s.cmd.Env = env
	s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.out
	s.cmd.ExtraFiles = []*os.File{w}
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		s.err = s.cmd.Wait()
		r.Close()
		close(s.done)
	}()
	_, err = io.WriteString(s.stdin, "set -eo pipefail\ntrap 'echo \"e2e: exit status $? from: $BASH_COMMAND\" >&2' ERR\n")
	return s, err
}

// run runs one block and returns what it printed. A failed command ends
// the shell: every later run fails too.
func (s *docShell) run(text string, timeout time.Duration) (string, error) {
	s.n++
	file := filepath.Join(s.dir, fmt.Sprintf("block-%02d.sh", s.n))
	if err := os.WriteFile(file, []byte(text+"\n"), 0o600); err != nil {
		return "", err
	}
	mark := s.out.Len()
	if _, err := fmt.Fprintf(s.stdin, "source %q </dev/null\necho done >&3\n", file); err != nil {
		return s.out.From(mark), fmt.Errorf("the shell is gone: %w", err)
	}
	line := make(chan error, 1)
	go func() {
		_, err := s.status.ReadString('\n')
		line <- err
	}()
	select {
	case err := <-line:
		if err == nil {
			return s.out.From(mark), nil
		}
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
		}
		return s.out.From(mark), fmt.Errorf("the shell exited (%v)", s.err)
	case <-time.After(timeout):
		s.stop()
		return s.out.From(mark), fmt.Errorf("still running after %s", timeout)
	}
}

func (s *docShell) stop() {
	if s.cmd.Process != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
	<-s.done
}

// lockedBuffer is an io.Writer several goroutines (the shell's stdout and
// stderr copiers) write to.
type lockedBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *lockedBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.buf)
}

func (b *lockedBuffer) From(i int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf[i:])
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n/2] + fmt.Sprintf("\n… %d bytes …\n", len(s)-n) + s[len(s)-n/2:]
}

// docStandIns plays, on one goroutine, what the page's cluster would run
// and this one has not: the kubelet's loop for every pod outside the
// suite's own e2e-* namespaces (each pod run by the suite's one kubelet
// stand-in on an address of the test host: stackdome's chart pods as the
// stackdome binary with their Deployments' arguments, any other image as a
// listener answering like go-httpbin), kube-proxy for the chart's
// error-page Service (its ClusterIP on the test host), and a load balancer
// for each Service of type LoadBalancer (its status names the test host's
// root-side address, where its ports forward to the Service's endpoints).
type docStandIns struct {
	k        *framework.Kube
	kl       *framework.Kubelet
	host     *framework.TestHost
	bin      string // stackdome, built from the repository
	dir      string
	cancel   context.CancelFunc
	finished chan struct{}
	// busy counts the pods being started or deleted: stop waits for them,
	// so that no pod starts, or keeps its ports, after the test.
	busy sync.WaitGroup

	mu       sync.Mutex
	ips      map[string]netip.Addr // pod (ns/name) → its address
	next     netip.Addr
	added    []netip.Addr // addresses given to the test host
	pods     map[string]*framework.Pod
	starting map[string]bool
	deleting map[string]bool   // pods whose preStop and stop are under way
	forwards map[string]func() // Service address:port → its forward's stop
	errorSvc [2]string
	errs     map[string]int // what went wrong, how often
}

func startDocStandIns(t *testing.T, host *framework.TestHost, bin string) *docStandIns {
	ctx, cancel := context.WithCancel(context.Background())
	a := host.Prefix.Addr().As4()
	a[3] = 10 // .1 and .2 are the test host's own; ClusterIPs are in the upper half
	s := &docStandIns{
		k: suite.cluster.Kube, kl: suite.kubelet, host: host, bin: bin, dir: t.TempDir(),
		cancel: cancel, finished: make(chan struct{}),
		ips: map[string]netip.Addr{}, next: netip.AddrFrom4(a),
		pods: map[string]*framework.Pod{}, starting: map[string]bool{}, deleting: map[string]bool{}, forwards: map[string]func(){},
		errs: map[string]int{},
	}
	go func() {
		defer close(s.finished)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			s.kubelet(ctx)
			s.serviceProxy(ctx)
			s.loadBalancers(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// stop ends the goroutine, waits for the pods being started or deleted,
// then ends the pods' processes and the forwards.
func (s *docStandIns) stop() {
	s.cancel()
	<-s.finished
	s.busy.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.pods {
		p.Stop()
	}
	s.pods = map[string]*framework.Pod{}
	for _, stop := range s.forwards {
		stop()
	}
	s.forwards = map[string]func(){}
}

// releaseAddresses takes the addresses it gave the test host away again.
func (s *docStandIns) releaseAddresses() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ip := range s.added {
		_ = s.host.DelAddress(ip)
	}
	s.added = nil
}

func (s *docStandIns) fail(what string, err error) {
	if err == nil || errors.Is(err, context.Canceled) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.errs[what+": "+err.Error()]++
}

// report is what went wrong in the stand-ins, for a failure message.
func (s *docStandIns) report() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.errs) == 0 {
		return "no errors"
	}
	var b strings.Builder
	for e, n := range s.errs {
		fmt.Fprintf(&b, "\n\t%d× %s", n, clip(e, 600))
	}
	return b.String()
}

// addAddress gives the test host ip, once.
func (s *docStandIns) addAddress(ip netip.Addr) error {
	if err := s.host.AddAddress(ip); err != nil {
		return err
	}
	s.mu.Lock()
	s.added = append(s.added, ip)
	s.mu.Unlock()
	return nil
}

// podIP is the pod's address on the test host, given out once.
func (s *docStandIns) podIP(key string) (netip.Addr, error) {
	s.mu.Lock()
	ip, ok := s.ips[key]
	if !ok {
		ip = s.next
		s.next = s.next.Next()
		s.ips[key] = ip
	}
	s.mu.Unlock()
	if ok {
		return ip, nil
	}
	return ip, s.addAddress(ip)
}

// outside reports pods and parents of the suite's own tests (namespaces
// e2e-*), which this stand-in leaves alone.
func outside(o obj) bool {
	ns, _ := framework.Dig(o, "metadata", "namespace").(string)
	return strings.HasPrefix(ns, "e2e-")
}

// kubelet is the kubelet's sync loop for the page's pods: a new pod is
// started by the suite's kubelet stand-in (on a goroutine of its own: a
// pod's start waits for its readiness probe) at an address of the test
// host; a deleted one is stopped the way a kubelet stops it (preStop, then
// SIGTERM) and removed.
func (s *docStandIns) kubelet(ctx context.Context) {
	pods, err := s.k.List(ctx, "/api/v1/pods", "")
	if err != nil {
		s.fail("listing pods", err)
		return
	}
	for _, pod := range pods {
		if outside(pod) {
			continue
		}
		ns := framework.Dig(pod, "metadata", "namespace").(string)
		name := framework.Dig(pod, "metadata", "name").(string)
		key := ns + "/" + name
		s.mu.Lock()
		running, starting, deleting := s.pods[key], s.starting[key], s.deleting[key]
		if framework.Dig(pod, "metadata", "deletionTimestamp") != nil && running != nil {
			delete(s.pods, key)
			s.deleting[key] = true
		}
		s.mu.Unlock()
		if framework.Dig(pod, "metadata", "deletionTimestamp") != nil {
			switch {
			case running != nil:
				s.busy.Go(func() {
					running.Delete(ctx)
					s.mu.Lock()
					delete(s.deleting, key)
					s.mu.Unlock()
				})
			case !starting && !deleting:
				s.kl.ForceDeletePod(ns, name)
			}
			continue
		}
		if running != nil || starting || framework.Dig(pod, "status", "phase") == "Running" {
			continue
		}
		ip, err := s.podIP(key)
		if err != nil {
			s.fail("giving "+key+" an address", err)
			continue
		}
		s.images(pod)
		s.mu.Lock()
		s.starting[key] = true
		s.mu.Unlock()
		s.busy.Go(func() {
			p, err := s.kl.StartOnHost(ctx, pod, ip.String(), s.dir)
			s.mu.Lock()
			defer s.mu.Unlock()
			delete(s.starting, key)
			if err != nil {
				s.fail("running "+key, err)
				return
			}
			s.pods[key] = p
		})
	}
}

// images tells the kubelet what the pod's images are: the chart's
// stackdome image is the stackdome binary built from the repository (its
// image's entrypoint, /stackdome serve, tools/image); any other image the kubelet
// does not know answers like go-httpbin, the page's first app.
func (s *docStandIns) images(pod obj) {
	containers, _ := framework.Dig(pod, "spec", "containers").([]any)
	for _, c := range containers {
		ref := fmt.Sprint(framework.Dig(c, "image"))
		if s.kl.Knows(ref) {
			continue
		}
		switch {
		case chartPodKind(pod) != "":
			s.kl.AddImage(ref, framework.Image{Entrypoint: []string{"/stackdome", "serve"}, Files: map[string]string{"/stackdome": s.bin}})
		case framework.Dig(pod, "metadata", "labels", "app.kubernetes.io/name") == "traefik":
			// Traefik's chart's Deployment: the real Traefik binary.
			s.kl.AddImage(ref, suite.traefikChart.Image())
		default:
			s.kl.AddImage(ref, framework.Image{Serve: httpbinStandIn})
		}
	}
	if chartPodKind(pod) == "hooks" {
		args, _ := framework.Dig(containers[0], "args").([]any)
		for _, a := range args {
			flag, val, _ := strings.Cut(fmt.Sprint(a), "=")
			s.mu.Lock()
			switch flag {
			case "--error-service-name":
				s.errorSvc[1] = val
			case "--error-service-namespace":
				s.errorSvc[0] = val
			}
			s.mu.Unlock()
		}
	}
}

// chartPodKind: "hooks" for a pod of the chart's hook Deployment, "pages"
// for one of its error-page Deployment, "" for any other pod.
func chartPodKind(pod obj) string {
	containers, _ := framework.Dig(pod, "spec", "containers").([]any)
	if len(containers) != 1 {
		return ""
	}
	switch component, name := framework.Dig(pod, "metadata", "labels", "app.kubernetes.io/component"), framework.Dig(containers[0], "name"); {
	case component == "controller" && name == "stackdome":
		return "hooks"
	case component == "error-pages" && name == "error-pages":
		return "pages"
	}
	return ""
}

// httpbinStandIn answers like mccutchen/go-httpbin, the page's first app,
// for what the page asks of it (httpbin/httpbin.go, httpbin/handlers.go): at
// / its index page, whose <title> the page greps; at /status/<code> that
// status with a text/plain Content-Type and no body, as go-httpbin's
// doStatus answers a code it has no special case for (every 5xx; 3xx, 401,
// 402, 406, 407 and 418 get headers or a body of their own there, not
// here); 400 for a code that is not one; 404 elsewhere.
func httpbinStandIn(w http.ResponseWriter, r *http.Request) {
	if raw, ok := strings.CutPrefix(r.URL.Path, "/status/"); ok {
		code, err := strconv.Atoi(raw)
		if err != nil || code < 200 || code > 599 {
			http.Error(w, "invalid status code", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(code)
		return
	}
	if r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(w, "<!DOCTYPE html>\n<html>\n<head>\n  <title>go-httpbin(1): HTTP Client Testing Service</title>\n</head>\n<body>\n<h1>go-httpbin(1)</h1>\n"+
		"<p>Answered by the e2e suite's stand-in for the pod's container: no image is pulled here.</p>\n</body>\n</html>\n")
}

// serviceProxy is kube-proxy for the chart's error-page Service, which the
// page's app reaches by its ClusterIP (the EndpointSlice stackdome mirrors
// holds it): the address is given to the test host and each port forwarded
// to a ready endpoint.
func (s *docStandIns) serviceProxy(ctx context.Context) {
	s.mu.Lock()
	ns, name := s.errorSvc[0], s.errorSvc[1]
	s.mu.Unlock()
	if ns == "" || name == "" {
		return
	}
	svc, err := s.k.Get(ctx, "/api/v1/namespaces/"+ns+"/services/"+name)
	if framework.IsCode(err, 404) {
		return
	}
	if err != nil {
		s.fail("reading the error-page Service", err)
		return
	}
	ip, err := netip.ParseAddr(fmt.Sprint(framework.Dig(svc, "spec", "clusterIP")))
	if err != nil {
		return
	}
	s.mu.Lock()
	_, known := s.ips["service "+ns+"/"+name+" "+ip.String()]
	s.ips["service "+ns+"/"+name+" "+ip.String()] = ip
	s.mu.Unlock()
	if !known {
		if err := s.addAddress(ip); err != nil {
			s.fail("giving the test host ClusterIP "+ip.String(), err)
			return
		}
	}
	s.forwardPorts(svc, s.host, ip.String())
}

// loadBalancers is a load balancer for every Service of type LoadBalancer
// of the page's (Traefik's): its status names the test host's root-side
// address, whose ports forward to the Service's ready endpoints, as a
// cloud's load balancer and kube-proxy would.
func (s *docStandIns) loadBalancers(ctx context.Context) {
	svcs, err := s.k.List(ctx, "/api/v1/services", "")
	if err != nil {
		s.fail("listing Services", err)
		return
	}
	ip := s.host.HostIP.String()
	for _, svc := range svcs {
		if outside(svc) || framework.Dig(svc, "spec", "type") != "LoadBalancer" {
			continue
		}
		s.forwardPorts(svc, nil, ip)
		if ing, _ := framework.Dig(svc, "status", "loadBalancer", "ingress").([]any); len(ing) > 0 {
			continue
		}
		path := "/api/v1/namespaces/" + fmt.Sprint(framework.Dig(svc, "metadata", "namespace")) + "/services/" + fmt.Sprint(framework.Dig(svc, "metadata", "name")) + "/status"
		if _, err := s.k.MergePatch(ctx, path, obj{"status": obj{"loadBalancer": obj{"ingress": []any{obj{"ip": ip, "ipMode": "VIP"}}}}}); err != nil {
			s.fail("writing the load balancer's address", err)
		}
	}
}

// forwardPorts forwards each port of svc at ip (on the test host h, or in
// the root namespace when h is nil) to the Service's endpoints, once.
func (s *docStandIns) forwardPorts(svc obj, h *framework.TestHost, ip string) {
	ns := fmt.Sprint(framework.Dig(svc, "metadata", "namespace"))
	name := fmt.Sprint(framework.Dig(svc, "metadata", "name"))
	ports, _ := framework.Dig(svc, "spec", "ports").([]any)
	for _, p := range ports {
		port, err := strconv.Atoi(fmt.Sprint(framework.Dig(p, "port")))
		if err != nil {
			continue
		}
		addr := net.JoinHostPort(ip, strconv.Itoa(port))
		s.mu.Lock()
		_, done := s.forwards[addr]
		s.mu.Unlock()
		if done {
			continue
		}
		stop, err := suite.mc.Net.ForwardService(h, addr, ns, name, port)
		if err != nil {
			s.fail("forwarding "+addr+" to Service "+ns+"/"+name, err)
			continue
		}
		s.mu.Lock()
		s.forwards[addr] = stop
		s.mu.Unlock()
	}
}

// withoutClusterEnv drops the in-cluster variables and KUBECONFIG, which
// would make the page's kubectl and helm talk to another cluster than the
// one the test names.
func withoutClusterEnv(env []string) []string {
	var out []string
	for _, e := range env {
		if strings.HasPrefix(e, "KUBERNETES_SERVICE_") || strings.HasPrefix(e, "KUBECONFIG=") {
			continue
		}
		out = append(out, e)
	}
	return out
}
