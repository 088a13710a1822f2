//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// pagesRelease is the chart installed with helm in a namespace of its own,
// its pods run on the test host by the suite's kubelet stand-in: every pod
// the chart's hook and error-page Deployments' ReplicaSets create is started
// (releaseKubelet) from its rendered command, args, env and volumes, the
// chart's stackdome image being bin/stackdome, each on a test-host address
// of its own; a pod deleted (a rollout, a scale-down, helm uninstall) is
// stopped as a kubelet stops it (preStop, SIGTERM). The error-page
// Service's ClusterIP is given to the test host and forwarded to its ready
// endpoints, standing in for the service proxy of a real cluster.
type pagesRelease struct {
	name, namespace string
	errorService    string // the chart's error-page Service
	clusterIP       netip.Addr
	kubelet         *releaseKubelet
}

// The chart's error-page port (ports.errorPages and errorPages.service.port).
const pagePort = 8082

// newPagesRelease names a release of the chart in a new namespace; install
// installs it.
func newPagesRelease(t *testing.T, release string) *pagesRelease {
	return &pagesRelease{name: release, namespace: newNamespace(t), errorService: release + "-error-pages"}
}

// install installs chart (suiteChart() unless given) as the release with
// replicaCount=1, errorPages.replicaCount=1 and the test host's pod network,
// plus set, runs its pods on the test host (releaseKubelet) and waits for
// one hooks pod and, unless set disables them, one error-page pod, ready in
// their Services' EndpointSlices. It is uninstalled when the test ends.
func (r *pagesRelease) install(t *testing.T, chart string, set ...string) {
	t.Helper()
	ctx := t.Context()
	host := suite.host
	if chart == "" {
		chart = suiteChart()
	}
	release := r.name
	args := []string{"install", release, chart, "--namespace", r.namespace, "--timeout", "2m",
		"--set", "replicaCount=1", "--set", "errorPages.replicaCount=1", "--set", "podCIDRs={" + host.Prefix.String() + "}"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	r.kubelet = startReleaseKubelet(t, r.namespace, release)
	if out, err := helm(ctx, args...); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		helm(ctx, "uninstall", release, "--namespace", r.namespace)
	})
	waitReadyAddress(t, r.namespace, release, r.kubelet.waitIP(t, "controller"))
	svc, err := suite.cluster.Kube.Get(ctx, "/api/v1/namespaces/"+r.namespace+"/services/"+r.errorService)
	if framework.IsCode(err, 404) {
		return // errorPages.enabled=false
	}
	if err != nil {
		t.Fatal(err)
	}
	if r.clusterIP, err = netip.ParseAddr(fmt.Sprint(framework.Dig(svc, "spec", "clusterIP"))); err != nil {
		t.Fatalf("error-page Service has no ClusterIP: %v", err)
	}
	if err := host.AddAddress(r.clusterIP); err != nil {
		t.Fatal(err)
	}
	stop, err := suite.mc.Net.ForwardService(host, net.JoinHostPort(r.clusterIP.String(), strconv.Itoa(pagePort)), r.namespace, r.errorService, pagePort)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	waitReadyAddress(t, r.namespace, r.errorService, r.kubelet.waitIP(t, "error-pages"))
}

// compositeController is the name of the release's CompositeController
// (the chart's stackdome.compositeControllerName).
func (r *pagesRelease) compositeController() string { return r.namespace + "-" + r.name }

// releasePodBytes are the last bytes of the test-host addresses the
// releases' pods run on, one a pod, given back when it stops: in the lower
// half of the /24, below the ClusterIPs, beside the other bytes in use.
var releasePodBytes = struct {
	sync.Mutex
	used  map[byte]bool
	added map[byte]bool
}{used: map[byte]bool{}, added: map[byte]bool{}}

const releasePodFirst, releasePodLast = 90, 99

// takePodIP gives out a free release pod address.
func takePodIP() (netip.Addr, error) {
	releasePodBytes.Lock()
	defer releasePodBytes.Unlock()
	for b := byte(releasePodFirst); b <= releasePodLast; b++ {
		if releasePodBytes.used[b] {
			continue
		}
		ip := netip.MustParseAddr(framework.HostAddr(suite.host, b))
		if !releasePodBytes.added[b] {
			if err := suite.host.AddAddress(ip); err != nil {
				return netip.Addr{}, err
			}
			releasePodBytes.added[b] = true
		}
		releasePodBytes.used[b] = true
		return ip, nil
	}
	return netip.Addr{}, fmt.Errorf("all release pod addresses (.%d-.%d) in use", releasePodFirst, releasePodLast)
}

func givePodIP(ip netip.Addr) {
	releasePodBytes.Lock()
	defer releasePodBytes.Unlock()
	delete(releasePodBytes.used, ip.As4()[3])
}

// releaseKubelet is the kubelet's sync loop for the pods of one release
// (its namespace, its app.kubernetes.io/instance): a new pod is started by
// the suite's kubelet stand-in on an address of its own; a pod being
// deleted is stopped as a kubelet stops it (Pod.Delete: preStop, SIGTERM,
// then the pod object removed); a pod gone without that (force-deleted)
// has its processes ended. When the test ends every pod still running is
// stopped and force-deleted.
type releaseKubelet struct {
	ns, selector string
	dir          string
	cancel       context.CancelFunc
	finished     chan struct{}

	mu       sync.Mutex
	pods     map[string]*framework.Pod // running, by name
	ips      map[string]netip.Addr     // pod → its address
	starting map[string]bool
	deleting map[string]bool
	errs     []string
}

func startReleaseKubelet(t *testing.T, ns, release string) *releaseKubelet {
	t.Helper()
	requireHost(t)
	bin := buildStackdome(t)
	ctx, cancel := context.WithCancel(context.Background())
	kl := &releaseKubelet{
		ns: ns, selector: "app.kubernetes.io/instance=" + release, dir: t.TempDir(),
		cancel: cancel, finished: make(chan struct{}),
		pods: map[string]*framework.Pod{}, ips: map[string]netip.Addr{}, starting: map[string]bool{}, deleting: map[string]bool{},
	}
	go func() {
		defer close(kl.finished)
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
		for {
			kl.sync(ctx, bin)
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(kl.stop)
	return kl
}

// stop ends the loop and every pod's processes, and force-deletes the pods.
func (kl *releaseKubelet) stop() {
	kl.cancel()
	<-kl.finished
	for {
		kl.mu.Lock()
		busy := len(kl.starting) + len(kl.deleting)
		kl.mu.Unlock()
		if busy == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	kl.mu.Lock()
	defer kl.mu.Unlock()
	for name, p := range kl.pods {
		p.Stop()
		suite.kubelet.ForceDeletePod(kl.ns, name)
	}
	kl.pods = map[string]*framework.Pod{}
	for name, ip := range kl.ips {
		givePodIP(ip)
		delete(kl.ips, name)
	}
}

func (kl *releaseKubelet) fail(format string, args ...any) {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	if len(kl.errs) < 20 {
		kl.errs = append(kl.errs, fmt.Sprintf(format, args...))
	}
}

// forget gives a stopped pod's address back.
func (kl *releaseKubelet) forget(name string) {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	delete(kl.pods, name)
	if ip, ok := kl.ips[name]; ok {
		givePodIP(ip)
		delete(kl.ips, name)
	}
}

func (kl *releaseKubelet) sync(ctx context.Context, bin string) {
	pods, err := suite.cluster.Kube.List(ctx, "/api/v1/namespaces/"+kl.ns+"/pods", kl.selector)
	if err != nil {
		if ctx.Err() == nil {
			kl.fail("listing pods: %v", err)
		}
		return
	}
	seen := map[string]bool{}
	for _, pod := range pods {
		name := framework.Dig(pod, "metadata", "name").(string)
		seen[name] = true
		kl.mu.Lock()
		running, starting, deleting := kl.pods[name], kl.starting[name], kl.deleting[name]
		gone := framework.Dig(pod, "metadata", "deletionTimestamp") != nil
		if gone && running != nil {
			delete(kl.pods, name)
			kl.deleting[name] = true
		}
		kl.mu.Unlock()
		switch {
		case gone && running != nil:
			go func() {
				running.Delete(ctx)
				kl.forget(name)
				kl.mu.Lock()
				delete(kl.deleting, name)
				kl.mu.Unlock()
			}()
			continue
		case gone:
			if !starting && !deleting {
				suite.kubelet.ForceDeletePod(kl.ns, name)
			}
			continue
		case running != nil || starting || deleting:
			continue
		}
		if chartPodKind(pod) == "" {
			continue
		}
		containers, _ := framework.Dig(pod, "spec", "containers").([]any)
		for _, c := range containers {
			// The chart's stackdome image: its Dockerfile's entrypoint,
			// /stackdome serve, is the binary built from the repository.
			if ref := fmt.Sprint(framework.Dig(c, "image")); !suite.kubelet.Knows(ref) {
				suite.kubelet.AddImage(ref, framework.Image{Entrypoint: []string{"/stackdome", "serve"}, Files: map[string]string{"/stackdome": bin}})
			}
		}
		ip, err := takePodIP()
		if err != nil {
			kl.fail("pod %s: %v", name, err)
			continue
		}
		kl.mu.Lock()
		kl.starting[name] = true
		kl.ips[name] = ip
		kl.mu.Unlock()
		go func() {
			p, err := suite.kubelet.StartOnHost(ctx, pod, ip.String(), kl.dir)
			kl.mu.Lock()
			delete(kl.starting, name)
			kl.mu.Unlock()
			if err != nil {
				if ctx.Err() == nil {
					kl.fail("running pod %s: %v", name, err)
				}
				kl.forget(name)
				return
			}
			kl.mu.Lock()
			kl.pods[name] = p
			kl.mu.Unlock()
		}()
	}
	// A pod gone from the API without a deletion seen (force-deleted):
	// its containers end with it.
	kl.mu.Lock()
	var orphans []*framework.Pod
	for name, p := range kl.pods {
		if !seen[name] {
			orphans = append(orphans, p)
			delete(kl.pods, name)
		}
	}
	kl.mu.Unlock()
	for _, p := range orphans {
		p.Stop()
		kl.forget(p.Name)
	}
}

// waitIP waits for a running pod of the release's component ("controller":
// the hooks', "error-pages") and returns its address.
func (kl *releaseKubelet) waitIP(t *testing.T, component string) string {
	t.Helper()
	var ip string
	err := framework.WaitUntil(2*time.Minute, 200*time.Millisecond, "a running "+component+" pod of the release", func() (bool, error) {
		kl.mu.Lock()
		defer kl.mu.Unlock()
		for name, p := range kl.pods {
			pod, err := suite.cluster.Kube.Get(t.Context(), "/api/v1/namespaces/"+kl.ns+"/pods/"+name)
			if err != nil {
				continue
			}
			if framework.Dig(pod, "metadata", "labels", "app.kubernetes.io/component") == component {
				ip = p.IP
				return true, nil
			}
		}
		if len(kl.errs) > 0 {
			return false, fmt.Errorf("%v", kl.errs)
		}
		return false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ip
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
