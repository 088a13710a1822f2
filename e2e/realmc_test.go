//go:build e2e

package e2e

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

// realMetacontroller is the running Metacontroller pod.
type realMetacontroller struct {
	dir     string
	sandbox *podSandbox
	proc    *proc
	net     *clusterNet
	pod     string
	command []string // the StatefulSet's container command and args
	stops   []func()
}

// metacontrollerSourcePath says where the pinned Metacontroller source is, or
// the one line telling what to set: the suite never runs without it.
func metacontrollerSourcePath(shared string) (string, error) {
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

// buildMetacontroller runs e2e/metacontroller/build.sh, which builds only
// when its cache lacks the binary, and returns the cache directory (the
// binary and the extracted source tree src/).
func buildMetacontroller(root, shared string) (string, error) {
	if _, err := metacontrollerSourcePath(shared); err != nil {
		return "", err
	}
	os.Setenv("STACKDOME_SHARED", shared)
	return runBuildScript(root, "metacontroller", "Metacontroller")
}

// startRealMetacontroller installs manifests/production with kubectl and
// runs the StatefulSet's pod.
func startRealMetacontroller(ctx context.Context, c *cluster, kubectl, mcDir, dir string) (_ *realMetacontroller, err error) {
	m := &realMetacontroller{dir: dir, net: newClusterNet(c.kube)}
	defer func() {
		if err != nil {
			m.stop()
		}
	}()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	// docs/install.md: kubectl apply -k <manifests/production>, the URL
	// replaced by the extracted tree of the same tag.
	cmd := exec.CommandContext(ctx, kubectl, "apply", "-k", filepath.Join(mcDir, "src", "manifests", "production"))
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.kubeconfig)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("kubectl apply -k manifests/production: %w\n%s", err, out)
	}
	k := c.kube
	sts, err := k.get(ctx, "/apis/apps/v1/namespaces/"+metacontrollerNS+"/statefulsets/"+metacontrollerSTS)
	if err != nil {
		return nil, err
	}
	// The pod kube-controller-manager's StatefulSet controller makes.
	m.pod = metacontrollerSTS + "-0"
	podPath := "/api/v1/namespaces/" + metacontrollerNS + "/pods/" + m.pod
	var pod obj
	if err := waitUntil(60*time.Second, 200*time.Millisecond, "pod "+m.pod, func() (bool, error) {
		pod, err = k.get(ctx, podPath)
		return err == nil, err
	}); err != nil {
		return nil, err
	}
	if err := bindPod(ctx, metacontrollerNS, m.pod); err != nil {
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
	tmpl, err := containersOf(obj{"spec": dig(sts, "spec", "template", "spec")}, false)
	if err != nil {
		return nil, err
	}
	if len(tmpl) != 1 || !slices.Equal(tmpl[0].command, cs[0].command) || !slices.Equal(tmpl[0].args, cs[0].args) {
		return nil, fmt.Errorf("pod %s does not run its StatefulSet's container: %+v, template %+v", m.pod, cs, tmpl)
	}
	m.command = append(append([]string{}, cs[0].command...), cs[0].args...)

	saDir, err := projectServiceAccount(ctx, c, pod, filepath.Join(dir, "serviceaccount"))
	if err != nil {
		return nil, err
	}
	if m.sandbox, err = newPodSandbox(dir); err != nil {
		return nil, err
	}
	kubeSvc, err := k.get(ctx, "/api/v1/namespaces/default/services/kubernetes")
	if err != nil {
		return nil, err
	}
	clusterIP := fmt.Sprint(dig(kubeSvc, "spec", "clusterIP"))
	if err := m.sandbox.addAddress(clusterIP); err != nil {
		return nil, err
	}
	apiURL, err := url.Parse(k.base)
	if err != nil {
		return nil, err
	}
	stop, err := forwardAPIIn(m.sandbox.netns, net.JoinHostPort(clusterIP, "443"), apiURL.Host)
	if err != nil {
		return nil, err
	}
	m.stops = append(m.stops, stop)
	if stop, err = m.net.serveIn(m.sandbox.netns, proxyAddr); err != nil {
		return nil, err
	}
	m.stops = append(m.stops, stop)

	img := image{files: map[string]string{metacontrollerBinPath: filepath.Join(mcDir, "metacontroller")}}
	env := []string{
		"KUBERNETES_SERVICE_HOST=" + clusterIP, "KUBERNETES_SERVICE_PORT=443",
		// The cluster DNS and service-proxy stand-in (clusternet_test.go).
		"HTTP_PROXY=http://" + proxyAddr,
	}
	if m.proc, err = m.sandbox.runContainer("metacontroller", cs[0], img, saDir, env); err != nil {
		return nil, err
	}
	port, path, ok := httpGetProbe(pod, cs[0].name, "readinessProbe")
	if !ok {
		return nil, fmt.Errorf("StatefulSet %s: no readinessProbe.httpGet", metacontrollerSTS)
	}
	if err := waitUntil(90*time.Second, 250*time.Millisecond, "Metacontroller's readiness probe", func() (bool, error) {
		if done, err := m.proc.exited(); done {
			return false, fmt.Errorf("metacontroller exited (%v):\n%s", err, indent(m.proc.tail(30)))
		}
		err := m.sandbox.probe(ctx, port, path)
		return err == nil, err
	}); err != nil {
		return nil, err
	}
	if _, err := k.mergePatch(ctx, podPath+"/status", runningStatus(pod)); err != nil {
		return nil, fmt.Errorf("reporting pod %s running: %w", m.pod, err)
	}
	return m, nil
}

func (m *realMetacontroller) stop() {
	if m.proc != nil {
		m.proc.stop(10 * time.Second)
	}
	for _, s := range m.stops {
		s()
	}
	if m.sandbox != nil {
		m.sandbox.close()
	}
}

// healthy reports a Metacontroller that has exited.
func (m *realMetacontroller) healthy() error {
	if done, err := m.proc.exited(); done {
		return fmt.Errorf("metacontroller exited (%v):\n%s", err, indent(m.proc.tail(30)))
	}
	return nil
}

// bindPod does what the scheduler would: binds the pod to testNode.
func bindPod(ctx context.Context, ns, name string) error {
	if err := ensureNode(ctx); err != nil {
		return err
	}
	_, err := suite.cluster.kube.create(ctx, "/api/v1/namespaces/"+ns+"/pods/"+name+"/binding", obj{
		"apiVersion": "v1", "kind": "Binding",
		"metadata": obj{"name": name},
		"target":   obj{"apiVersion": "v1", "kind": "Node", "name": testNode},
	})
	if err != nil {
		return fmt.Errorf("binding pod %s/%s to %s: %w", ns, name, testNode, err)
	}
	return nil
}

// projectServiceAccount writes what the kubelet projects into a pod's
// ServiceAccount volume: a token from the TokenRequest API bound to the pod,
// the cluster's CA (the kube-root-ca.crt ConfigMap's ca.crt) and the pod's
// namespace. The kubelet asks for about an hour and refreshes it; the
// stand-in asks for a day and never refreshes (the suite is shorter).
func projectServiceAccount(ctx context.Context, c *cluster, pod obj, dir string) (string, error) {
	ns := fmt.Sprint(dig(pod, "metadata", "namespace"))
	sa, _ := dig(pod, "spec", "serviceAccountName").(string)
	if sa == "" {
		sa = "default"
	}
	tr, err := c.kube.create(ctx, "/api/v1/namespaces/"+ns+"/serviceaccounts/"+sa+"/token", obj{
		"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
		"spec": obj{
			"expirationSeconds": 86400,
			"boundObjectRef": obj{"apiVersion": "v1", "kind": "Pod",
				"name": dig(pod, "metadata", "name"), "uid": dig(pod, "metadata", "uid")},
		},
	})
	if err != nil {
		return "", fmt.Errorf("TokenRequest for %s/%s: %w", ns, sa, err)
	}
	token, _ := dig(tr, "status", "token").(string)
	if token == "" {
		return "", fmt.Errorf("TokenRequest for %s/%s: no token", ns, sa)
	}
	var ca string
	if err := waitUntil(30*time.Second, 200*time.Millisecond, "ConfigMap "+ns+"/kube-root-ca.crt", func() (bool, error) {
		cm, err := c.kube.get(ctx, "/api/v1/namespaces/"+ns+"/configmaps/kube-root-ca.crt")
		if err != nil {
			return false, err
		}
		ca, _ = dig(cm, "data", "ca.crt").(string)
		return ca != "", nil
	}); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for name, data := range map[string]string{"token": token, "ca.crt": ca, "namespace": ns} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// runningStatus is the status a kubelet reports for a pod whose containers
// run and pass their readiness probe. The pod's network namespace has no
// address outside it, so no podIP is reported (nothing dials the pod).
func runningStatus(pod obj) obj {
	st := readyStatus(pod, "", "")
	s := st["status"].(obj)
	delete(s, "podIP")
	delete(s, "podIPs")
	return st
}

// String names the command Metacontroller runs with, for the log.
func (m *realMetacontroller) String() string {
	return fmt.Sprintf("Metacontroller %s as in its StatefulSet: %s", metacontrollerImage, strings.Join(m.command, " "))
}
