//go:build e2e

package framework

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// podSandbox is what a kubelet and its container runtime give one pod: a
// network namespace of its own (loopback only, so the container's listeners —
// Metacontroller's :8081 and :9999 — clash with nothing on this machine,
// not even another engineer's run), and for each container process a mount
// namespace of its own in which the ServiceAccount volume and the image's
// files appear at the paths the container expects. It needs root.
//
// What is not reproduced: the image's other files (the container sees this
// machine's filesystem under the mounts), its user (it runs as root), cgroups
// and resource limits, restarts.
type podSandbox struct {
	dir    string // scratch: the projected volume, the image's files, logs
	netns  string // /proc/<holder>/ns/net
	holder *exec.Cmd
}

// newPodSandbox makes the network namespace, held by a sleep that dies with
// the test binary (the kernel removes the namespace with its last process).
func newPodSandbox(dir string) (*podSandbox, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	holder := exec.Command("unshare", "--net", "--", "sleep", "infinity")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := holder.Start(); err != nil {
		return nil, fmt.Errorf("pod sandbox: unshare --net: %w", err)
	}
	s := &podSandbox{dir: dir, holder: holder, netns: fmt.Sprintf("/proc/%d/ns/net", holder.Process.Pid)}
	self, _ := os.Readlink("/proc/self/ns/net")
	// unshare(1) unshares, then execs sleep: until then the holder is still
	// in the root namespace.
	if err := WaitUntil(5*time.Second, 10*time.Millisecond, "the pod's network namespace", func() (bool, error) {
		ns, err := os.Readlink(s.netns)
		return err == nil && ns != self, err
	}); err != nil {
		s.close()
		return nil, err
	}
	if err := run("nsenter", "--net="+s.netns, "--", "ip", "link", "set", "lo", "up"); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// addAddress gives the sandbox's loopback one more address (a ClusterIP a
// container dials, answered by a listener of the cluster-network stand-in).
func (s *podSandbox) addAddress(ip string) error {
	return run("nsenter", "--net="+s.netns, "--", "ip", "addr", "add", ip+"/32", "dev", "lo")
}

func (s *podSandbox) close() {
	if s.holder != nil && s.holder.Process != nil {
		_ = syscall.Kill(-s.holder.Process.Pid, syscall.SIGKILL)
		_ = s.holder.Wait()
		s.holder = nil
	}
}

// image is what the stand-in kubelet knows of an image it cannot pull: the
// local files it holds at their paths in the image (the entrypoint binary).
type image struct {
	files map[string]string // path in the image → file on this machine
}

// serviceAccountDir is where a pod's ServiceAccount token volume is mounted
// (the projected volume the ServiceAccount admission plugin adds).
const serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// runContainer starts c's process in the sandbox's network namespace and a
// mount namespace of its own: the projected ServiceAccount volume (token,
// ca.crt, namespace, written to saDir) at serviceAccountDir, and each of the
// image's files at its path, so the container's own command runs unchanged.
// env is the environment a kubelet sets (KUBERNETES_SERVICE_HOST/PORT ...)
// before the container's own.
func (s *podSandbox) runContainer(name string, c container, img image, saDir string, env []string) (*Proc, error) {
	if len(c.command) == 0 {
		return nil, fmt.Errorf("container %s: no command (an image's entrypoint is not known to the stand-in kubelet)", c.name)
	}
	// Each directory of an image file becomes a bind mount of a directory
	// holding only the image's files there (a layer of the image).
	layers := map[string]string{} // directory in the container → host directory
	for path, file := range img.files {
		d := filepath.Dir(path)
		if d == "/" {
			// Nothing can be mounted over /: a file at the image's root
			// (stackdome's /stackdome) runs from where it is.
			for i, a := range c.command {
				if a == path {
					c.command[i] = file
				}
			}
			continue
		}
		host, ok := layers[d]
		if !ok {
			host = filepath.Join(s.dir, name+"-image", strings.ReplaceAll(strings.Trim(d, "/"), "/", "_"))
			if err := os.MkdirAll(host, 0o755); err != nil {
				return nil, err
			}
			layers[d] = host
		}
		link := filepath.Join(host, filepath.Base(path))
		_ = os.Remove(link)
		if err := os.Symlink(file, link); err != nil {
			return nil, err
		}
	}
	// /var/run is /run on this machine; a tmpfs over it in the container's
	// mount namespace holds the ServiceAccount directory without touching
	// the host's.
	script := []string{"set -e"}
	if saDir != "" {
		script = append(script,
			"mount -t tmpfs -o mode=0755,size=1m tmpfs /run",
			"mkdir -p "+serviceAccountDir,
			"mount --bind -o ro "+saDir+" "+serviceAccountDir)
	}
	for d, host := range layers {
		script = append(script, "mount --bind -o ro "+host+" "+d)
	}
	// A volume's mount point the machine has not (/etc/stackdome/brands) is
	// made in an overlay of its nearest existing directory, whose upper
	// layer is a tmpfs of the container's mount namespace: the host's
	// directory is left as it is.
	for i, m := range c.mounts {
		if m.source == "" {
			continue // a volume the stand-in does not fill
		}
		if _, err := os.Stat(m.path); err != nil {
			base := filepath.Dir(m.path)
			for {
				if _, err := os.Stat(base); err == nil {
					break
				}
				base = filepath.Dir(base)
			}
			if base == "/" {
				return nil, fmt.Errorf("container %s: volume mount %s: nothing can be overlaid on /", c.name, m.path)
			}
			scratch := filepath.Join(s.dir, fmt.Sprintf("%s-overlay-%d", name, i))
			if err := os.MkdirAll(scratch, 0o700); err != nil {
				return nil, err
			}
			script = append(script,
				"mount -t tmpfs -o mode=0755,size=1m tmpfs "+scratch,
				"mkdir "+scratch+"/upper "+scratch+"/work",
				"mount -t overlay overlay -o lowerdir="+base+",upperdir="+scratch+"/upper,workdir="+scratch+"/work "+base,
				"mkdir -p "+m.path)
		}
		script = append(script, "mount --bind -o ro "+m.source+" "+m.path)
	}
	script = append(script, `exec "$@"`)
	argv := append([]string{"nsenter", "--net=" + s.netns, "--", "unshare", "--mount", "--propagation", "private", "--",
		"sh", "-c", strings.Join(script, "\n"), "sh"}, append(c.command, c.args...)...)
	full := append([]string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root"}, env...)
	return startProcEnv(s.dir, name, append(full, c.env...), argv[0], argv[1:]...)
}

// probe runs an httpGet probe of the pod spec (host, port, path) from inside the
// sandbox, as the kubelet probes in the pod's network namespace; nil on 2xx
// or 3xx.
//
// scheme is the probe's (HTTP or HTTPS); over HTTPS, as the kubelet, it
// neither verifies the server's certificate nor presents one.
func (s *podSandbox) probe(ctx context.Context, host string, port int, path, scheme string) error {
	tr := &http.Transport{
		DialContext:     func(ctx context.Context, _, addr string) (net.Conn, error) { return dialIn(ctx, s.netns, addr) },
		Proxy:           nil,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
	}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 2 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s://%s%s", strings.ToLower(scheme), net.JoinHostPort(host, strconv.Itoa(port)), path), nil)
	if err != nil {
		return err
	}
	resp, err := cl.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode >= 400 {
		return errors.New(resp.Status)
	}
	return nil
}

// httpGetProbe reads a container's readinessProbe.httpGet (port as a
// number or a containerPort's name, path, scheme: HTTP unless it says
// HTTPS); ok is false when it has none.
func httpGetProbe(pod Obj, container, probe string) (port int, path, scheme string, ok bool) {
	cs, _ := Dig(pod, "spec", "containers").([]any)
	for _, c := range cs {
		if Dig(c, "name") != container {
			continue
		}
		path, _ = Dig(c, probe, "httpGet", "path").(string)
		scheme = "HTTP"
		if Dig(c, probe, "httpGet", "scheme") == "HTTPS" {
			scheme = "HTTPS"
		}
		switch p := Dig(c, probe, "httpGet", "port").(type) {
		case json.Number:
			n, err := p.Int64()
			return int(n), path, scheme, err == nil
		case string:
			n, ok := portByName(c, p)
			return n, path, scheme, ok
		}
		return 0, "", "", false
	}
	return 0, "", "", false
}

// resourceField is a resourceFieldRef's value (divisor 1): requests.cpu or
// limits.cpu in whole cores rounded up, requests.memory or limits.memory in
// bytes; an unset limit (or request) is the node's allocatable, this
// machine's CPUs or memory.
func resourceField(resource string, requests, limits map[string]string) (int64, error) {
	kind, name, _ := strings.Cut(resource, ".")
	q := requests[name]
	if kind == "limits" {
		q = limits[name]
	}
	if q == "" {
		if name == "cpu" {
			return int64(runtime.NumCPU()), nil
		}
		return machineMemory()
	}
	mult := map[string]float64{"m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}
	num, scale := q, 1.0
	for suffix, m := range mult { // at most one suffix matches
		if n, ok := strings.CutSuffix(q, suffix); ok {
			num, scale = n, m
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("quantity %q of %s: %w", q, resource, err)
	}
	return int64(math.Ceil(f * scale)), nil
}

// machineMemory is MemTotal of /proc/meminfo, in bytes.
func machineMemory() (int64, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, errors.New("no MemTotal in /proc/meminfo")
}
