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
)

// TestInstallDoc runs docs/install.md top to bottom: every shell block, in
// order, in one bash, against the suite's API server — kubectl (built from
// e2e/kubectl), bin/helm and curl, from the repository root. A block marked
// `e2e: substituted` runs its stand-in instead (installDocSubstitutions, in
// installdoc_blocks_test.go): the cluster is the suite's control plane,
// Metacontroller is the real v4.17.2 the suite runs (its manifests applied
// again by the page's own block, the URL replaced by the pinned copy; its
// syncs reach the chart's pods through the cluster-network stand-in), Traefik is the real
// v3.7.13 binary out of cluster with its Helm chart's defaults, listening on
// ports 80 and 443 of the test host's root-side address. No image is pulled:
// a stand-in kubelet (docStandIns) binds each pod to the test node and runs
// it on an address of the test host — stackdome's pods as one `stackdome
// serve` with the Deployment's own arguments, any other pod as a listener on
// each containerPort answering like go-httpbin, the image the page's first
// app names (its index page at /, the status asked for at /status/<code>).
// The page's `curl` commands reach the real Traefik as written, and its
// branded-error-page step checks, through it, the page and the JSON envelope
// for the app's 503. The first block that fails
// fails the test, with its output and what the stand-ins saw.
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
	traefikCRDFile, err := traefikCRDs(suite.tmp)
	if err != nil {
		t.Fatal(err)
	}
	host := suite.host
	requireNode(t)

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
		"KUBECONFIG="+suite.cluster.kubeconfig,
		"HOME="+home,
		"HELM_CACHE_HOME="+filepath.Join(home, "helm", "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "helm", "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "helm", "data"),
		"E2E_POD_CIDR="+host.prefix.String(),
		"E2E_METACONTROLLER_MANIFESTS="+filepath.Join(suite.mcDir, "src", "manifests", "production"),
		"E2E_TRAEFIK_CRDS="+traefikCRDFile,
		"E2E_TRAEFIK="+host.hostIP.String(),
	)
	sh, err := startDocShell(env, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sh.stop)

	var run, substituted int
	start := time.Now()
	for _, s := range steps {
		text, what := s.block.text, "as written"
		if s.sub != nil {
			text, what = s.sub.shell, "substituted: "+s.sub.why
			substituted++
		} else {
			run++
		}
		began := time.Now()
		out, err := sh.run(text, 6*time.Minute)
		t.Logf("%s — %s (%s)\n%s", s.block, what, time.Since(began).Round(100*time.Millisecond), indent(clip(out, 3000)))
		if err != nil {
			t.Fatalf("%s failed: %v\nthe block:\n%s\nstand-ins: %s", s.block, err, indentLines(s.block.text), d.standIns.report())
		}
		if s.sub != nil {
			switch s.sub.start {
			case "traefik":
				d.startTraefik()
			}
		}
	}
	t.Logf("%s: %d blocks run as written, %d substituted, in %s; the real Metacontroller synced %d times through the stand-in network; stand-ins: %s",
		installDoc, run, substituted, time.Since(start).Round(time.Second), suite.mc.net.count("/sync"), d.standIns.report())
}

// docRun is what a run of the page started.
type docRun struct {
	t        *testing.T
	host     *testHost
	traefik  *traefik
	standIns *docStandIns
}

// startTraefik runs the real Traefik with the static configuration the
// Traefik Helm chart's defaults give it (docs/install.md, step 2): entry
// points web and websecure (TLS on), the kubernetesCRD provider with
// allowCrossNamespace and allowExternalNameServices false and
// allowEmptyServices true. web and websecure listen on ports 80 and 443 —
// the chart's Service ports — of the test host's root-side address, where
// the page's `curl --resolve` sends its requests; the api entry point
// (/ping, /api) stays on loopback, unexposed as the chart's is. No version
// check and no usage report: nothing dials off this machine.
func (d *docRun) startTraefik() {
	if d.traefik != nil {
		return
	}
	ports, err := freePorts(1)
	if err != nil {
		d.t.Fatal(err)
	}
	addr := d.host.hostIP.String()
	provider := traefikCRDProvider()
	provider["allowCrossNamespace"] = false
	provider["allowExternalNameServices"] = false
	provider["allowEmptyServices"] = true
	static := obj{
		"entryPoints": obj{
			"web":       obj{"address": net.JoinHostPort(addr, "80")},
			"websecure": obj{"address": net.JoinHostPort(addr, "443"), "http": obj{"tls": obj{}}},
			"traefik":   obj{"address": "127.0.0.1:" + strconv.Itoa(ports[0])},
		},
		"global":    obj{"checkNewVersion": false, "sendAnonymousUsage": false},
		"api":       obj{"insecure": true, "dashboard": false},
		"ping":      obj{},
		"log":       obj{"level": "INFO"},
		"providers": obj{"kubernetesCRD": provider},
	}
	d.traefik = runTraefik(d.t, static, &traefik{
		web:       "http://" + net.JoinHostPort(addr, "80"),
		websecure: "https://" + net.JoinHostPort(addr, "443"),
		api:       "http://127.0.0.1:" + strconv.Itoa(ports[0]),
	})
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
	k := suite.cluster.kube
	if out, err := helm(ctx, "status", "stackdome", "--namespace", "stackdome"); err == nil {
		if out, err := helm(ctx, "uninstall", "stackdome", "--namespace", "stackdome"); err != nil {
			d.t.Errorf("helm uninstall: %v\n%s", err, out)
		}
	} else if !strings.Contains(string(out), "not found") {
		d.t.Logf("helm status: %v\n%s", err, out)
	}
	namespaces := []string{"hello", "stackdome"}
	for _, ns := range namespaces {
		if err := k.do(ctx, "DELETE", "/api/v1/namespaces/"+ns, "", nil, nil); err != nil && !isCode(err, 404) {
			d.t.Errorf("deleting namespace %s: %v", ns, err)
		}
	}
	// Pods bound to the test node never finish deleting without a kubelet.
	err := waitUntil(time.Minute, 500*time.Millisecond, "the page's pods gone", func() (bool, error) {
		left := 0
		for _, ns := range namespaces {
			pods, err := listItems(ctx, "/api/v1/namespaces/"+ns+"/pods", "")
			if err != nil {
				return false, err
			}
			for _, p := range pods {
				left++
				forceDeletePod(ns, dig(p, "metadata", "name").(string))
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
func restoreStackResourceCRD(ctx context.Context, k *kube) error {
	err := waitUntil(time.Minute, 250*time.Millisecond, "the StackResource CRD deleted or kept", func() (bool, error) {
		o, err := k.get(ctx, crdPath+"/"+stackCRDName)
		if isCode(err, 404) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return dig(o, "metadata", "deletionTimestamp") == nil, errors.New("being deleted")
	})
	if err != nil {
		return err
	}
	if _, err := k.get(ctx, crdPath+"/"+stackCRDName); err == nil {
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
// and this one has not: a kubelet for every pod outside the suite's own
// e2e-* namespaces, the service proxy for the chart's error-page Service,
// and — once the page installed it — Metacontroller, syncing every such
// StackResource about once a second under the live CompositeController
// stackdome-stackdome.
type docStandIns struct {
	k        *kube
	host     *testHost
	bin      string // stackdome, built from the repository
	dir      string
	cancel   context.CancelFunc
	finished chan struct{}

	mu        sync.Mutex
	ips       map[string]netip.Addr // pod (ns/name) → its address
	next      netip.Addr
	added     []netip.Addr // addresses given to the test host
	listeners map[string][]net.Listener
	stackdome *proc  // one `stackdome serve` for all of the chart's hook pods
	hook      string // its hook base URL, once ready
	pages     *proc  // one `stackdome serve --hooks=false` for all of its error-page pods
	pagesURL  string // its /readyz base URL, once ready
	errorSvc  [2]string
	errs      map[string]int // what went wrong, how often
}

func startDocStandIns(t *testing.T, host *testHost, bin string) *docStandIns {
	ctx, cancel := context.WithCancel(context.Background())
	a := host.prefix.Addr().As4()
	a[3] = 10 // .1 and .2 are the test host's own; ClusterIPs are in the upper half
	s := &docStandIns{
		k: suite.cluster.kube, host: host, bin: bin, dir: t.TempDir(),
		cancel: cancel, finished: make(chan struct{}),
		ips: map[string]netip.Addr{}, next: netip.AddrFrom4(a), listeners: map[string][]net.Listener{},
		errs: map[string]int{},
	}
	go func() {
		defer close(s.finished)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for n := 0; ; n++ {
			s.kubelet(ctx)
			s.serviceProxy(ctx)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// stop ends the goroutine, the listeners and stackdome.
func (s *docStandIns) stop() {
	s.cancel()
	<-s.finished
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ls := range s.listeners {
		for _, l := range ls {
			l.Close()
		}
	}
	s.listeners = map[string][]net.Listener{}
	if s.stackdome != nil {
		s.stackdome.stop(10 * time.Second)
	}
	if s.pages != nil {
		s.pages.stop(10 * time.Second)
	}
}

// releaseAddresses takes the addresses it gave the test host away again.
func (s *docStandIns) releaseAddresses() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ip := range s.added {
		_ = s.host.delAddress(ip)
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
	if err := s.host.addAddress(ip); err != nil {
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
	ns, _ := dig(o, "metadata", "namespace").(string)
	return strings.HasPrefix(ns, "e2e-")
}

// kubelet does for each pod what a scheduler and a kubelet would: bind it
// to the test node, run it, mark it Running and Ready at its address; and
// delete a deleted pod at once.
func (s *docStandIns) kubelet(ctx context.Context) {
	pods, err := listItems(ctx, "/api/v1/pods", "")
	if err != nil {
		s.fail("listing pods", err)
		return
	}
	for _, pod := range pods {
		if outside(pod) {
			continue
		}
		ns := dig(pod, "metadata", "namespace").(string)
		name := dig(pod, "metadata", "name").(string)
		key := ns + "/" + name
		if dig(pod, "metadata", "deletionTimestamp") != nil {
			s.mu.Lock()
			for _, l := range s.listeners[key] {
				l.Close()
			}
			delete(s.listeners, key)
			s.mu.Unlock()
			forceDeletePod(ns, name)
			continue
		}
		if dig(pod, "status", "phase") == "Running" {
			continue
		}
		if dig(pod, "spec", "nodeName") == nil {
			_, err := s.k.create(ctx, "/api/v1/namespaces/"+ns+"/pods/"+name+"/binding", obj{
				"apiVersion": "v1", "kind": "Binding", "metadata": obj{"name": name},
				"target": obj{"apiVersion": "v1", "kind": "Node", "name": testNode},
			})
			if err != nil {
				s.fail("binding "+key, err)
				continue
			}
		}
		ip, err := s.podIP(key)
		if err != nil {
			s.fail("giving "+key+" an address", err)
			continue
		}
		if kind := chartPodKind(pod); kind != "" {
			if err := s.runStackdome(ctx, kind, pod, ip); err != nil {
				s.fail("running stackdome for "+key, err)
				continue
			}
		} else if err := s.runApp(key, pod, ip); err != nil {
			s.fail("running "+key, err)
			continue
		}
		if _, err := s.k.mergePatch(ctx, "/api/v1/namespaces/"+ns+"/pods/"+name+"/status", readyStatus(pod, ip.String(), suite.host.hostIP.String())); err != nil {
			s.fail("marking "+key+" ready", err)
		}
	}
}

// chartPodKind: "hooks" for a pod of the chart's hook Deployment, "pages"
// for one of its error-page Deployment, "" for any other pod.
func chartPodKind(pod obj) string {
	containers, _ := dig(pod, "spec", "containers").([]any)
	if len(containers) != 1 {
		return ""
	}
	switch component, name := dig(pod, "metadata", "labels", "app.kubernetes.io/component"), dig(containers[0], "name"); {
	case component == "controller" && name == "stackdome":
		return "hooks"
	case component == "error-pages" && name == "error-pages":
		return "pages"
	}
	return ""
}

// runStackdome starts, for the first of the chart's pods of a kind (hooks
// or pages), `stackdome serve` on the test host with that pod's arguments —
// the hooks (or health) and metrics ports on the pod's address, the error
// pages, where served, on every address of the host (the pods' and the
// error-page Service's ClusterIP) — and waits for /readyz. Later pods of the
// kind (the second replica, a rollout's) are served by the same process.
func (s *docStandIns) runStackdome(ctx context.Context, kind string, pod obj, ip netip.Addr) error {
	proc, url := &s.stackdome, &s.hook
	if kind == "pages" {
		proc, url = &s.pages, &s.pagesURL
	}
	s.mu.Lock()
	started, hook := *proc != nil, *url
	s.mu.Unlock()
	if started {
		if hook == "" {
			return errors.New("stackdome " + kind + " not ready yet")
		}
		return nil
	}
	rawArgs, _ := dig(pod, "spec", "containers").([]any)[0].(map[string]any)["args"].([]any)
	args := []string{"serve"}
	hookPort := "8080"
	for _, a := range rawArgs {
		arg := fmt.Sprint(a)
		flag, val, _ := strings.Cut(arg, "=")
		switch flag {
		case "--listen", "--metrics-listen":
			_, port, err := net.SplitHostPort(val)
			if err != nil {
				return fmt.Errorf("%s: %w", arg, err)
			}
			if flag == "--listen" {
				hookPort = port
			}
			arg = flag + "=" + net.JoinHostPort(ip.String(), port)
		case "--error-service-name":
			s.errorSvc[1] = val
		case "--error-service-namespace":
			s.errorSvc[0] = val
		}
		args = append(args, arg)
	}
	p, err := s.host.startProc(s.dir, "stackdome-"+kind+"-pod", s.bin, args...)
	if err != nil {
		return err
	}
	s.mu.Lock()
	*proc = p
	s.mu.Unlock()
	base := "http://" + net.JoinHostPort(ip.String(), hookPort)
	err = waitUntil(30*time.Second, 100*time.Millisecond, "stackdome /readyz", func() (bool, error) {
		if done, err := p.exited(); done {
			return false, fmt.Errorf("stackdome exited (%v):\n%s", err, indent(p.tail(20)))
		}
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, fmt.Errorf("/readyz: %s", resp.Status)
	})
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		p.stop(5 * time.Second)
		*proc = nil // the next round starts it again
		return err
	}
	*url = base
	return nil
}

// runApp opens, for any other pod, a listener on each containerPort at the
// pod's address, answering like go-httpbin (httpbinStandIn): the image the
// page's first app names is not pulled, its stand-in answers in its place.
func (s *docStandIns) runApp(key string, pod obj, ip netip.Addr) error {
	s.mu.Lock()
	_, running := s.listeners[key]
	s.mu.Unlock()
	if running {
		return nil
	}
	var ls []net.Listener
	containers, _ := dig(pod, "spec", "containers").([]any)
	for _, c := range containers {
		ports, _ := dig(c, "ports").([]any)
		for _, p := range ports {
			port := fmt.Sprint(dig(p, "containerPort"))
			l, err := s.host.listen(net.JoinHostPort(ip.String(), port))
			if err != nil {
				for _, l := range ls {
					l.Close()
				}
				return err
			}
			srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(httpbinStandIn)}
			go srv.Serve(l)
			ls = append(ls, l)
		}
	}
	s.mu.Lock()
	s.listeners[key] = ls
	s.mu.Unlock()
	return nil
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

// serviceProxy makes the chart's error-page Service answer on its
// ClusterIP, as kube-proxy would route it to a page replica: the address is
// given to the test host, where stackdome's pages listen on every address.
func (s *docStandIns) serviceProxy(ctx context.Context) {
	s.mu.Lock()
	ns, name := s.errorSvc[0], s.errorSvc[1]
	s.mu.Unlock()
	if ns == "" || name == "" {
		return
	}
	svc, err := s.k.get(ctx, "/api/v1/namespaces/"+ns+"/services/"+name)
	if isCode(err, 404) {
		return
	}
	if err != nil {
		s.fail("reading the error-page Service", err)
		return
	}
	ip, err := netip.ParseAddr(fmt.Sprint(dig(svc, "spec", "clusterIP")))
	if err != nil {
		return
	}
	key := "service " + ns + "/" + name + " " + ip.String()
	s.mu.Lock()
	_, done := s.ips[key]
	s.ips[key] = ip
	s.mu.Unlock()
	if !done {
		s.fail("giving the test host ClusterIP "+ip.String(), s.addAddress(ip))
	}
}
