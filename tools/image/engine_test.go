package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// engine is Buildah and Podman with storage, configuration and temporary
// files of their own under one directory, so that a test shares no image,
// container or cache with the machine and leaves nothing on it: the vfs
// driver (no mount outlives a command), runc in the cgroup parent
// cgroupParent (removed at cleanup), no registry to search, no bridge
// network (a build's RUN has none, a container gets none or the host's),
// so no firewall rule is written.
type engine struct {
	dir          string
	env          []string
	cgroupParent string // absolute, under each cgroup v1 hierarchy
}

// newEngine checks that buildah, podman and runc are installed and returns
// an engine whose every trace is gone after the test. runc, not crun: Debian
// 12's crun refuses a hybrid cgroup layout (cgroup v1 with a v2 hierarchy
// that has a controller), as on CI's machine.
func newEngine(t *testing.T) *engine {
	t.Helper()
	for _, tool := range []string{"buildah", "podman", "runc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: apt-get install buildah podman runc (.ci/run does)", tool)
		}
	}
	dir, err := os.MkdirTemp("", "stackdome-engine-*")
	if err != nil {
		t.Fatal(err)
	}
	e := &engine{dir: dir, cgroupParent: "/" + filepath.Base(dir)}
	t.Cleanup(func() { e.remove(t) })

	files := map[string]string{
		"storage.conf": fmt.Sprintf("[storage]\ndriver = \"vfs\"\ngraphroot = %q\nrunroot = %q\n",
			filepath.Join(dir, "root"), filepath.Join(dir, "runroot")),
		"registries.conf": "unqualified-search-registries = []\n",
		"auth.json":       "{}\n", // no credentials: nothing is pulled or pushed
		// Limits of 1024: Podman and Buildah otherwise ask runc for far
		// higher ones (1048576 open files), which a machine with lower hard
		// limits, as CI's, refuses; the build and the server need few.
		"containers.conf": fmt.Sprintf("[containers]\ndefault_ulimits = [\"nofile=1024:1024\", \"nproc=1024:1024\"]\n"+
			"[engine]\nruntime = \"runc\"\ncgroup_manager = \"cgroupfs\"\nevents_logger = \"file\"\nevents_logfile_path = %q\ntmp_dir = %q\n"+
			"[network]\nnetwork_config_dir = %q\n",
			filepath.Join(dir, "events.log"), filepath.Join(dir, "libpod"), filepath.Join(dir, "cni")),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tmp := filepath.Join(dir, "tmp") // Buildah's cache mounts live in $TMPDIR/buildah-cache
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	e.env = append(os.Environ(),
		"CONTAINERS_STORAGE_CONF="+filepath.Join(dir, "storage.conf"),
		"CONTAINERS_REGISTRIES_CONF="+filepath.Join(dir, "registries.conf"),
		"CONTAINERS_CONF="+filepath.Join(dir, "containers.conf"),
		"REGISTRY_AUTH_FILE="+filepath.Join(dir, "auth.json"),
		"TMPDIR="+tmp,
	)
	return e
}

// command returns tool (buildah or podman) with args, in the engine's
// environment.
func (e *engine) command(tool string, args ...string) *exec.Cmd {
	cmd := exec.Command(tool, args...)
	cmd.Env = e.env
	return cmd
}

// run runs tool with args and returns its stdout; stderr is in the error.
func (e *engine) run(t *testing.T, tool string, args ...string) string {
	t.Helper()
	cmd := e.command(tool, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", tool, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// remove deletes every container and image of the engine, then its
// directory, unmounting whatever is still mounted under it, and the cgroups
// Podman made under cgroupParent; it reports what it could not remove.
func (e *engine) remove(t *testing.T) {
	for _, c := range [][]string{
		{"podman", "rm", "--all", "--force", "--time", "0"},
		{"buildah", "rm", "--all"},
		{"podman", "system", "reset", "--force"},
	} {
		cmd := e.command(c[0], c[1:]...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("cleanup: %s: %v\n%s", strings.Join(c, " "), err, out)
		}
	}
	for _, m := range mountsUnder(t, e.dir) {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
			t.Errorf("cleanup: unmounting %s: %v", m, err)
		}
	}
	if err := os.RemoveAll(e.dir); err != nil {
		t.Errorf("cleanup: %v", err)
	}
	hierarchies, _ := filepath.Glob("/sys/fs/cgroup/*" + e.cgroupParent)
	for _, h := range hierarchies {
		// Deepest first: a cgroup goes only once empty of children and tasks.
		var dirs []string
		filepath.WalkDir(h, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := retryRmdir(dirs[i]); err != nil {
				t.Errorf("cleanup: cgroup %s: %v", dirs[i], err)
			}
		}
	}
}

// retryRmdir removes an empty cgroup, waiting a little for its last task
// (conmon, runc) to be reaped.
func retryRmdir(dir string) error {
	var err error
	for range 50 {
		if err = syscall.Rmdir(dir); err == nil || os.IsNotExist(err) {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

// mountsUnder lists the mount points at or under dir, deepest first.
func mountsUnder(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var under []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && (f[4] == dir || strings.HasPrefix(f[4], dir+"/")) {
			under = append(under, f[4])
		}
	}
	for i, j := 0, len(under)-1; i < j; i, j = i+1, j-1 {
		under[i], under[j] = under[j], under[i]
	}
	return under
}

// hostState is what a test of the engine must leave as it found: the
// mount table, the firewall, and the names in the directories where
// Podman and the CNI plugins keep networks and network namespaces, as text.
// (Buildah 1.28 keeps a cache of which registry holds which blob digest in
// /var/lib/containers/cache whatever its storage root; that file is left.)
func hostState(t *testing.T) map[string]string {
	t.Helper()
	state := map[string]string{}
	for _, dir := range []string{"/etc/cni/net.d", "/run/netns", "/var/lib/cni", "/run/containers", "/run/libpod"} {
		entries, _ := os.ReadDir(dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		state[dir] = strings.Join(names, " ")
	}
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	state["mounts"] = string(b)
	for _, c := range [][]string{{"iptables-save"}, {"ip6tables-save"}, {"nft", "list", "ruleset"}} {
		if _, err := exec.LookPath(c[0]); err != nil {
			continue
		}
		out, err := exec.Command(c[0], c[1:]...).Output()
		if err != nil {
			t.Fatalf("%s: %v", strings.Join(c, " "), err)
		}
		state[strings.Join(c, " ")] = stripCounters(string(out))
	}
	return state
}

// stripCounters drops iptables-save's comment lines and packet counters,
// which change with traffic, not with rules.
func stripCounters(s string) string {
	var keep []string
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, ":") {
			if i := strings.LastIndex(line, " ["); i > 0 {
				line = line[:i]
			}
		}
		keep = append(keep, line)
	}
	return strings.Join(keep, "\n")
}
