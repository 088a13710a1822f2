//go:build e2e

package framework

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Image is what the kubelet stand-in knows of an image it cannot pull: the
// local files it holds, or a handler that answers in place of its process.
type Image struct {
	// Entrypoint is the image's ENTRYPOINT: what runs when a container of
	// the image names no command.
	Entrypoint []string
	// Files are the local files the image holds, by their path in the image
	// (the entrypoint binary).
	Files map[string]string
	// Serve, when set, stands in for the image's process: it answers on each
	// containerPort at the pod's address (an app whose binary is not here).
	Serve http.HandlerFunc
}

// AddImage tells the kubelet what ref is. An image it does not know fails
// its pod's start, naming the image.
func (kl *Kubelet) AddImage(ref string, img Image) {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	if kl.images == nil {
		kl.images = map[string]Image{}
	}
	kl.images[ref] = img
}

func (kl *Kubelet) image(ref string) (Image, bool) {
	kl.mu.Lock()
	defer kl.mu.Unlock()
	img, ok := kl.images[ref]
	return img, ok
}

// Placement is where the kubelet runs a pod. The stand-in cannot give each
// pod a network namespace joined to the others, so a pod either shares the
// test host's namespace at an address of its own, or has a namespace of its
// own that nothing dials into.
type Placement struct {
	// Host and IP: the pod runs in the test host's network namespace at IP
	// (an address the caller gave the test host); every listen address of
	// all interfaces in its arguments (":8000", "0.0.0.0:8000/tcp") is
	// narrowed to IP, so two pods' ports never clash.
	Host *TestHost
	IP   string
	// sandbox: the pod's own network namespace (Metacontroller's).
	sandbox *podSandbox
	// Env is what the kubelet sets before each container's own environment
	// (KUBERNETES_SERVICE_HOST/PORT ...).
	Env []string
	// Dir is the pod's scratch directory (the projected volume, the image
	// layers, the logs).
	Dir string
}

// Pod is a pod the kubelet runs.
type Pod struct {
	Namespace, Name string
	IP              string // "" in a sandbox of its own

	kl       *Kubelet
	spec     Obj
	sandbox  *podSandbox
	procs    map[string]*Proc // container → its process
	order    []string         // containers in the spec's order
	servers  []*http.Server   // an image's handler, one a containerPort
	secrets  []secretVolume   // its secret volumes
	stopOnce sync.Once
}

// Proc is the process of the pod's container name, nil when an image's
// handler stands in for it.
func (p *Pod) Proc(container string) *Proc { return p.procs[container] }

// Start does for pod what the scheduler and a kubelet do: binds it to
// TestNode, projects its ServiceAccount token (a TokenRequest bound to the
// pod) and its configMap volumes, runs its init containers one after the
// other, each to completion, then its containers in order, each as its
// image says (a local binary in a mount namespace of its own that shows the
// token, the image's files and its configMap volumeMounts at their paths,
// or a listener on its containerPorts), waits for each
// container's readinessProbe (httpGet) and reports the pod Running and Ready
// with its podIP, containerStatuses and conditions. On error what started
// is stopped.
func (kl *Kubelet) Start(ctx context.Context, pod Obj, pl Placement) (_ *Pod, err error) {
	ns, _ := Dig(pod, "metadata", "namespace").(string)
	name, _ := Dig(pod, "metadata", "name").(string)
	p := &Pod{Namespace: ns, Name: name, IP: pl.IP, kl: kl, spec: pod, procs: map[string]*Proc{}, sandbox: pl.sandbox}
	if p.sandbox == nil {
		if pl.Host == nil || pl.IP == "" {
			return nil, fmt.Errorf("pod %s/%s: no placement", ns, name)
		}
		p.sandbox = &podSandbox{dir: pl.Dir, netns: pl.Host.netns}
	}
	defer func() {
		if err != nil {
			p.stopProcesses(0)
		}
	}()
	if err := os.MkdirAll(pl.Dir, 0o700); err != nil {
		return nil, err
	}
	if Dig(pod, "spec", "nodeName") == nil {
		if err := kl.BindPod(ctx, ns, name); err != nil {
			return nil, err
		}
	}
	saDir := ""
	if Dig(pod, "spec", "automountServiceAccountToken") != false {
		if saDir, err = kl.projectServiceAccount(ctx, pod, filepath.Join(pl.Dir, "serviceaccount")); err != nil {
			return nil, err
		}
	}
	vols, err := kl.configMapVolumes(ctx, pod, filepath.Join(pl.Dir, "volumes"))
	if err != nil {
		return nil, err
	}
	if p.secrets, err = kl.secretVolumes(ctx, pod, filepath.Join(pl.Dir, "volumes")); err != nil {
		return nil, err
	}
	for _, v := range p.secrets {
		vols[v.volume] = v.dir
	}
	inits, err := containersOf(pod, true)
	if err != nil {
		return nil, err
	}
	withVolumes(inits, vols)
	for _, c := range inits {
		proc, err := p.runContainer(c, saDir, pl)
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s: init container %s: %w", ns, name, c.name, err)
		}
		if proc == nil {
			continue
		}
		if err := WaitUntil(2*time.Minute, 100*time.Millisecond, "init container "+c.name, func() (bool, error) {
			done, err := proc.Exited()
			if done && err != nil {
				return false, fmt.Errorf("init container %s failed (%v):\n%s", c.name, err, Indent(proc.Tail(20)))
			}
			return done, nil
		}); err != nil {
			return nil, err
		}
	}
	cs, err := containersOf(pod, false)
	if err != nil {
		return nil, err
	}
	withVolumes(cs, vols)
	for _, c := range cs {
		proc, err := p.runContainer(c, saDir, pl)
		if err != nil {
			return nil, fmt.Errorf("pod %s/%s: container %s: %w", ns, name, c.name, err)
		}
		p.order = append(p.order, c.name)
		if proc != nil {
			p.procs[c.name] = proc
		}
	}
	for _, c := range cs {
		port, path, scheme, ok := httpGetProbe(pod, c.name, "readinessProbe")
		if !ok {
			continue
		}
		host := "127.0.0.1"
		if p.IP != "" {
			host = p.IP
		}
		proc := p.procs[c.name]
		if err := WaitUntil(90*time.Second, 250*time.Millisecond, "the readiness probe of "+ns+"/"+name+" "+c.name, func() (bool, error) {
			if proc != nil {
				if done, err := proc.Exited(); done {
					return false, fmt.Errorf("%s exited (%v):\n%s", c.name, err, Indent(proc.Tail(30)))
				}
			}
			err := p.sandbox.probe(ctx, host, port, path, scheme)
			return err == nil, err
		}); err != nil {
			return nil, err
		}
	}
	status := ReadyStatus(pod, p.IP, "")
	if p.IP == "" {
		status = runningStatus(pod)
	} else if pl.Host != nil {
		status["status"].(Obj)["hostIP"] = pl.Host.HostIP.String()
	}
	if _, err := kl.kube.MergePatch(ctx, "/api/v1/namespaces/"+ns+"/pods/"+name+"/status", status); err != nil {
		return nil, fmt.Errorf("reporting pod %s/%s running: %w", ns, name, err)
	}
	return p, nil
}

// runContainer starts one container: its image's binary, or its image's
// handler on each containerPort (nil process).
func (p *Pod) runContainer(c container, saDir string, pl Placement) (*Proc, error) {
	img, ok := p.kl.image(c.image)
	if !ok {
		return nil, fmt.Errorf("image %s is not known to the kubelet stand-in (Kubelet.AddImage)", c.image)
	}
	if img.Serve != nil {
		if p.IP == "" {
			return nil, errors.New("an image's handler needs a pod address")
		}
		for _, port := range c.ports {
			l, err := pl.Host.Listen(net.JoinHostPort(p.IP, strconv.Itoa(port)))
			if err != nil {
				return nil, err
			}
			srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: img.Serve}
			p.servers = append(p.servers, srv)
			go srv.Serve(l)
		}
		return nil, nil
	}
	if len(c.command) == 0 {
		c.command = img.Entrypoint
	}
	if p.IP != "" {
		for i, a := range c.args {
			c.args[i] = narrowListen(a, p.IP)
		}
	}
	return p.sandbox.runContainer(p.Namespace+"_"+p.Name+"_"+c.name, c, image{files: img.Files}, saDir, append(append([]string{}, pl.Env...), "HOSTNAME="+p.Name))
}

// allInterfaces is a listen address of every interface, with or without a
// flag name before it and a protocol after it (Traefik's ":8000/tcp").
var allInterfaces = regexp.MustCompile(`^(--?[A-Za-z0-9._-]+=)?(0\.0\.0\.0|\[::\])?:([0-9]+)(/tcp|/udp)?$`)

// narrowListen narrows a listen address of all interfaces to ip.
func narrowListen(arg, ip string) string {
	m := allInterfaces.FindStringSubmatch(arg)
	if m == nil {
		return arg
	}
	return m[1] + net.JoinHostPort(ip, m[3]) + m[4]
}

// containerPorts are the containerPort numbers of a container spec.
func containerPorts(c any) []int {
	var out []int
	ports, _ := Dig(c, "ports").([]any)
	for _, p := range ports {
		if n, err := strconv.Atoi(fmt.Sprint(Dig(p, "containerPort"))); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// portByName resolves a probe's named port among the container's ports.
func portByName(c any, name string) (int, bool) {
	ports, _ := Dig(c, "ports").([]any)
	for _, p := range ports {
		if Dig(p, "name") == name {
			n, err := strconv.Atoi(fmt.Sprint(Dig(p, "containerPort")))
			return n, err == nil
		}
	}
	return 0, false
}

func (p *Pod) String() string {
	return strings.Join([]string{p.Namespace, p.Name}, "/")
}
