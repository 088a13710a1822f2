//go:build e2e

package framework

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The real Metacontroller: built from its pinned source
// (e2e/metacontroller/build.sh), installed as docs/install.md installs it
// (`kubectl apply -k` of manifests/production), and its StatefulSet's pod run
// by the stand-in kubelet as the real binary with the StatefulSet's own
// command and args, in a pod sandbox of its own, authenticated as its
// ServiceAccount (a TokenRequest token, its real ClusterRole). Every sync of
// the suite is one of its syncs.

const (
	metacontrollerImage   = "ghcr.io/metacontroller/metacontroller:v4.17.2"
	metacontrollerBinPath = "/usr/bin/metacontroller" // in the image
	metacontrollerNS      = "metacontroller"
	metacontrollerSTS     = "metacontroller"
	// proxyAddr is where the cluster-network stand-in listens inside the
	// pod's network namespace (HTTP_PROXY).
	proxyAddr = "127.0.0.1:3128"
)

// Metacontroller is the running Metacontroller pod.
type Metacontroller struct {
	dir     string
	sandbox *podSandbox
	Proc    *Proc
	Net     *clusterNet
	running *Pod
	pod     string
	place   Placement // where the kubelet runs the pod (Restart)
	command []string  // the StatefulSet's container command and args
	stops   []func()
}

// MetacontrollerSourcePath says where the pinned Metacontroller source is, or
// the one line telling what to set: the suite never runs without it.
func MetacontrollerSourcePath(shared string) (string, error) {
	if src := os.Getenv("METACONTROLLER_SRC"); src != "" {
		if _, err := os.Stat(src); err != nil {
			return "", fmt.Errorf("METACONTROLLER_SRC=%s: %w", src, err)
		}
		return src, nil
	}
	archive := filepath.Join(shared, "vendor", "metacontroller-4.17.2.tar.gz")
	if _, err := os.Stat(archive); err != nil {
		return "", errors.New("no Metacontroller v4.17.2 source: set METACONTROLLER_SRC to a checkout or tar.gz archive of github.com/metacontroller/metacontroller at v4.17.2 (or provide ../shared/vendor/metacontroller-4.17.2.tar.gz)")
	}
	return archive, nil
}

// BuildMetacontroller runs e2e/metacontroller/build.sh, which builds only
// when its cache lacks the binary, and returns the cache directory (the
// binary and the extracted source tree src/).
func BuildMetacontroller(root, shared string) (string, error) {
	if _, err := MetacontrollerSourcePath(shared); err != nil {
		return "", err
	}
	os.Setenv("STACKDOME_SHARED", shared)
	return runBuildScript(root, "metacontroller", "Metacontroller")
}

// StartMetacontroller installs manifests/production with kubectl and
// runs the StatefulSet's pod.
func StartMetacontroller(ctx context.Context, c *Cluster, kl *Kubelet, kubectl, mcDir, dir string) (_ *Metacontroller, err error) {
	m := &Metacontroller{dir: dir, Net: newClusterNet(c.Kube)}
	defer func() {
		if err != nil {
			m.Stop()
		}
	}()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	// docs/install.md: kubectl apply -k <manifests/production>, the URL
	// replaced by the extracted tree of the same tag.
	cmd := exec.CommandContext(ctx, kubectl, "apply", "-k", filepath.Join(mcDir, "src", "manifests", "production"))
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("kubectl apply -k manifests/production: %w\n%s", err, out)
	}
	k := c.Kube
	sts, err := k.Get(ctx, "/apis/apps/v1/namespaces/"+metacontrollerNS+"/statefulsets/"+metacontrollerSTS)
	if err != nil {
		return nil, err
	}
	// The pod kube-controller-manager's StatefulSet controller makes.
	m.pod = metacontrollerSTS + "-0"
	podPath := "/api/v1/namespaces/" + metacontrollerNS + "/pods/" + m.pod
	var pod Obj
	if err := WaitUntil(60*time.Second, 200*time.Millisecond, "pod "+m.pod, func() (bool, error) {
		pod, err = k.Get(ctx, podPath)
		return err == nil, err
	}); err != nil {
		return nil, err
	}
	cs, err := containersOf(pod, false)
	if err != nil {
		return nil, err
	}
	if len(cs) != 1 || cs[0].image != metacontrollerImage {
		return nil, fmt.Errorf("StatefulSet %s: want one container of %s, the pod has %+v", metacontrollerSTS, metacontrollerImage, cs)
	}
	// The pod is the StatefulSet's template; what runs is the template's
	// command and args, checked to be the pod's.
	tmpl, err := containersOf(Obj{"spec": Dig(sts, "spec", "template", "spec")}, false)
	if err != nil {
		return nil, err
	}
	if len(tmpl) != 1 || !slices.Equal(tmpl[0].command, cs[0].command) || !slices.Equal(tmpl[0].args, cs[0].args) {
		return nil, fmt.Errorf("pod %s does not run its StatefulSet's container: %+v, template %+v", m.pod, cs, tmpl)
	}
	m.command = append(append([]string{}, cs[0].command...), cs[0].args...)

	if _, _, _, ok := httpGetProbe(pod, cs[0].name, "readinessProbe"); !ok {
		return nil, fmt.Errorf("StatefulSet %s: no readinessProbe.httpGet", metacontrollerSTS)
	}
	if m.sandbox, err = newPodSandbox(dir); err != nil {
		return nil, err
	}
	kubeSvc, err := k.Get(ctx, "/api/v1/namespaces/default/services/kubernetes")
	if err != nil {
		return nil, err
	}
	clusterIP := fmt.Sprint(Dig(kubeSvc, "spec", "clusterIP"))
	if err := m.sandbox.addAddress(clusterIP); err != nil {
		return nil, err
	}
	apiURL, err := url.Parse(k.Base)
	if err != nil {
		return nil, err
	}
	stop, err := forwardAPIIn(m.sandbox.netns, net.JoinHostPort(clusterIP, "443"), apiURL.Host)
	if err != nil {
		return nil, err
	}
	m.stops = append(m.stops, stop)
	if stop, err = m.Net.serveIn(m.sandbox.netns, proxyAddr); err != nil {
		return nil, err
	}
	m.stops = append(m.stops, stop)

	kl.AddImage(metacontrollerImage, Image{Files: map[string]string{metacontrollerBinPath: filepath.Join(mcDir, "metacontroller")}})
	env := []string{
		"KUBERNETES_SERVICE_HOST=" + clusterIP, "KUBERNETES_SERVICE_PORT=443",
		// The cluster DNS and service-proxy stand-in (clusternet.go).
		"HTTP_PROXY=http://" + proxyAddr,
		// https:// hooks (the chart's hooks.tls): a CONNECT to the same
		// stand-in, which relays the mutual TLS (clusternet_tls.go).
		"HTTPS_PROXY=http://" + proxyAddr,
		"NO_PROXY=" + clusterIP, // the API server: reached directly, as before
	}
	// The kubelet binds the pod, mounts its ServiceAccount token, runs the
	// container and reports it running once its readiness probe answers.
	m.place = Placement{sandbox: m.sandbox, Env: env, Dir: dir}
	if m.running, err = kl.Start(ctx, pod, m.place); err != nil {
		return nil, err
	}
	m.Proc = m.running.Proc(cs[0].name)
	return m, nil
}

// Restart runs Metacontroller's container again with its StatefulSet's
// command and args followed by extra (a later flag wins), as a `kubectl
// edit` of the StatefulSet's args would, in the same pod sandbox and behind
// the same network stand-ins; it returns once the readiness probe answers.
func (m *Metacontroller) Restart(ctx context.Context, kl *Kubelet, extra []string) error {
	pod, err := kl.kube.Get(ctx, "/api/v1/namespaces/"+metacontrollerNS+"/pods/"+m.pod)
	if err != nil {
		return err
	}
	cs, _ := Dig(pod, "spec", "containers").([]any)
	if len(cs) != 1 {
		return fmt.Errorf("pod %s: want one container, have %d", m.pod, len(cs))
	}
	c := cs[0].(Obj)
	args, _ := c["args"].([]any)
	for _, a := range extra {
		args = append(args, a)
	}
	c["args"] = args
	m.running.stopContainers(10 * time.Second)
	if m.running, err = kl.Start(ctx, pod, m.place); err != nil {
		return err
	}
	m.Proc = m.running.Proc(fmt.Sprint(c["name"]))
	m.command = append(m.command, extra...)
	return nil
}

// Stop ends Metacontroller's process, its network stand-ins and its sandbox.
func (m *Metacontroller) Stop() {
	if m.running != nil {
		m.running.Stop()
	}
	for _, s := range m.stops {
		s()
	}
	if m.sandbox != nil {
		m.sandbox.close()
	}
}

// Healthy reports a Metacontroller that has exited.
func (m *Metacontroller) Healthy() error {
	if done, err := m.Proc.Exited(); done {
		return fmt.Errorf("metacontroller exited (%v):\n%s", err, Indent(m.Proc.Tail(30)))
	}
	return nil
}

// String names the command Metacontroller runs with, for the log.
func (m *Metacontroller) String() string {
	return fmt.Sprintf("Metacontroller %s as in its StatefulSet: %s", metacontrollerImage, strings.Join(m.command, " "))
}

// HookVersion is the version of one of cc's hooks: "v1" when unset, as
// HookVersion's CRD default and GetVersion have it.
func HookVersion(cc Obj, hook string) string {
	if v, _ := Dig(cc, "spec", "hooks", hook, "version").(string); v != "" {
		return v
	}
	return "v1"
}
