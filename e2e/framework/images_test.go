//go:build e2e

package framework

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// shape is what a pod relies on in an image: the facts of the real image
// (its Dockerfile or official build), written here independently of
// images_layout.go.
type shape struct {
	User       string
	Entrypoint []string
	Cmd        []string
	WorkingDir string
	Binary     string // the executable the entrypoint (or Cmd) runs
	Platforms  []string
}

// TestImages builds every image (cached) and reads each archive as
// containerd's importer would: named as the kubelet looks it up, one index
// with the platforms wanted, the user, entrypoint and working directory the
// real image has, the binary static, executable, where the entrypoint says.
func TestImages(t *testing.T) {
	root := repoRoot(t)
	start := time.Now()
	archives, err := BuildImages(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("BuildImages: %s", time.Since(start).Round(time.Millisecond))
	stackdome, err := StackdomeImage(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	here := "linux/" + runtime.GOARCH
	want := map[string]shape{
		stackdome: {User: "65532:65532", Entrypoint: []string{"/stackdome", "serve"}, WorkingDir: "/", Binary: "/stackdome",
			Platforms: []string{"linux/amd64", "linux/arm64"}},
		"ghcr.io/metacontroller/metacontroller:v4.17.2": {User: "nonroot:nonroot", Cmd: []string{"/usr/bin/metacontroller"},
			Binary: "/usr/bin/metacontroller", Platforms: []string{here}},
		"docker.io/library/traefik:v3.7.11": {Entrypoint: []string{"/usr/local/bin/traefik"}, Binary: "/usr/local/bin/traefik",
			Platforms: []string{here}},
		"registry.k8s.io/coredns/coredns:v1.15.0": {User: "nonroot:nonroot", Entrypoint: []string{"/coredns"}, WorkingDir: "/",
			Binary: "/coredns", Platforms: []string{here}},
		"registry.k8s.io/pause:3.10": {User: "65535:65535", Entrypoint: []string{"/pause"}, WorkingDir: "/", Binary: "/pause",
			Platforms: []string{here}},
		"stackdome.test/portapp:e2e": {User: "65532:65532", Entrypoint: []string{"/portapp"}, WorkingDir: "/", Binary: "/portapp",
			Platforms: []string{here}},
		"docker.io/mccutchen/go-httpbin:2.22.1": {User: "65532", Cmd: []string{"/bin/go-httpbin"}, WorkingDir: "/home/nonroot", Binary: "/bin/go-httpbin",
			Platforms: []string{here}},
	}
	got := map[string]bool{}
	for _, a := range archives {
		t.Run(a.Ref, func(t *testing.T) {
			got[a.Ref] = true
			w, ok := want[a.Ref]
			if !ok {
				t.Fatalf("BuildImages made %s, which no pod of the suite names", a.Ref)
			}
			if a.Ref != NormalizeImage(a.Ref) {
				t.Errorf("%s is not the name the kubelet looks up (%s)", a.Ref, NormalizeImage(a.Ref))
			}
			st, err := os.Stat(a.Path)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s, %.1f MB", a.Ref, a.Path, float64(st.Size())/1e6)
			r := openImageArchive(t, a.Path)
			if r.name != a.Ref || r.indexDigest != a.Digest {
				t.Errorf("the archive names %s %s, BuildImages said %s %s", r.name, r.indexDigest, a.Ref, a.Digest)
			}
			var platforms []string
			for p := range r.images {
				platforms = append(platforms, p)
			}
			if diff := cmp.Diff(w.Platforms, platforms, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
				t.Errorf("platforms (-want +got):\n%s", diff)
			}
			for p, img := range r.images {
				c := img.config.Config
				gotShape := shape{User: c.User, Entrypoint: c.Entrypoint, Cmd: c.Cmd, WorkingDir: c.WorkingDir,
					Binary: w.Binary, Platforms: w.Platforms}
				if diff := cmp.Diff(w, gotShape); diff != "" {
					t.Errorf("%s config (-want +got):\n%s", p, diff)
				}
				bin, ok := img.files[w.Binary]
				if !ok {
					t.Fatalf("%s: no %s in the layer", p, w.Binary)
				}
				if bin.hdr.Mode&0o111 != 0o111 {
					t.Errorf("%s: %s mode %o, want executable by all", p, w.Binary, bin.hdr.Mode)
				}
				machine := map[string]elf.Machine{"linux/amd64": elf.EM_X86_64, "linux/arm64": elf.EM_AARCH64}[p]
				if err := staticELF(bin.data, machine); err != nil {
					t.Errorf("%s: %s: %v", p, w.Binary, err)
				}
				if name, _, ok := strings.Cut(c.User, ":"); ok && !strings.ContainsAny(name[:1], "0123456789") {
					if uid := passwdUID(img.files["/etc/passwd"].data, name); uid != "65532" {
						t.Errorf("%s: user %s is uid %q in /etc/passwd, want 65532", p, name, uid)
					}
				}
			}
		})
	}
	for ref := range want {
		if !got[ref] {
			t.Errorf("BuildImages made no %s", ref)
		}
	}
}

// passwdUID is name's uid in an /etc/passwd, "" when absent.
func passwdUID(passwd []byte, name string) string {
	sc := bufio.NewScanner(bytes.NewReader(passwd))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ":")
		if len(f) > 2 && f[0] == name {
			return f[2]
		}
	}
	return ""
}

// TestCoreDNSBindsPort53: CoreDNS's image, like registry.k8s.io's, lets its
// non-root user bind port 53 through a file capability on /coredns.
func TestCoreDNSBindsPort53(t *testing.T) {
	archives, err := BuildImages(context.Background(), repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range archives {
		if a.Ref != ImageCoreDNS {
			continue
		}
		img := openImageArchive(t, a.Path).images["linux/"+runtime.GOARCH]
		got := img.files["/coredns"].hdr.PAXRecords["SCHILY.xattr.security.capability"]
		// VFS_CAP_REVISION_2 | effective; permitted bit 10, CAP_NET_BIND_SERVICE.
		want := "\x01\x00\x00\x02\x00\x04\x00\x00" + strings.Repeat("\x00", 12)
		if got != want {
			t.Errorf("/coredns security.capability = %q, want %q", got, want)
		}
		return
	}
	t.Fatalf("no %s among %v", ImageCoreDNS, archives)
}

func TestNormalizeImage(t *testing.T) {
	for in, want := range map[string]string{
		"traefik":                                       "docker.io/library/traefik:latest",
		"traefik:v3.7.11":                               "docker.io/library/traefik:v3.7.11",
		"docker.io/traefik:v3.7.11":                     "docker.io/library/traefik:v3.7.11",
		"index.docker.io/traefik:v3.7.11":               "docker.io/library/traefik:v3.7.11",
		"docker.io/library/traefik:v3.7.11":             "docker.io/library/traefik:v3.7.11",
		"traefik/whoami:v1.10":                          "docker.io/traefik/whoami:v1.10",
		"ghcr.io/metacontroller/metacontroller:v4.17.2": "ghcr.io/metacontroller/metacontroller:v4.17.2",
		"localhost/app":                                 "localhost/app:latest",
		"localhost:5000/app":                            "localhost:5000/app:latest",
		"registry.k8s.io/pause:3.10":                    "registry.k8s.io/pause:3.10",
		"stackdome.test/portapp:e2e":                    "stackdome.test/portapp:e2e",
		"ghcr.io/stackdome/stackdome@sha256:0123abcd":   "ghcr.io/stackdome/stackdome@sha256:0123abcd",
		"traefik@sha256:0123abcd":                       "docker.io/library/traefik@sha256:0123abcd",
		"registry.example:5000/team/app:1.0":            "registry.example:5000/team/app:1.0",
	} {
		if got := NormalizeImage(in); got != want {
			t.Errorf("NormalizeImage(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCheckImages: a pod whose images the node holds passes, under either
// spelling of a Docker Hub name; each missing one is named, once.
func TestCheckImages(t *testing.T) {
	have := []string{"docker.io/library/traefik:v3.7.11", "stackdome.test/portapp:e2e", "registry.k8s.io/pause:3.10"}
	pod := func(images ...string) *corev1.PodSpec {
		s := &corev1.PodSpec{InitContainers: []corev1.Container{{Image: images[0]}}}
		for _, i := range images[1:] {
			s.Containers = append(s.Containers, corev1.Container{Image: i})
		}
		return s
	}
	for name, tc := range map[string]struct {
		spec        *corev1.PodSpec
		wantMissing []string
	}{
		"all held":          {pod(ImagePortApp, ImageTraefik, "traefik:v3.7.11"), nil},
		"one missing":       {pod(ImagePortApp, ImageMetacontroller), []string{ImageMetacontroller}},
		"init missing":      {pod("busybox", ImagePortApp), []string{"busybox"}},
		"named once":        {pod(ImagePortApp, "traefik:v3.6.0", "traefik:v3.6.0"), []string{"traefik:v3.6.0"}},
		"tag differs":       {pod(ImagePortApp, "stackdome.test/portapp:other"), []string{"stackdome.test/portapp:other"}},
		"ephemeral missing": {&corev1.PodSpec{EphemeralContainers: []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{Image: "debug:1"}}}}, []string{"debug:1"}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantMissing, MissingImages(tc.spec, have)); diff != "" {
				t.Errorf("MissingImages (-want +got):\n%s", diff)
			}
			err := CheckImages("web-0", tc.spec, have)
			if (err == nil) != (tc.wantMissing == nil) {
				t.Fatalf("CheckImages = %v, want missing %v", err, tc.wantMissing)
			}
			for _, m := range tc.wantMissing {
				if !strings.Contains(err.Error(), m) || !strings.Contains(err.Error(), "pod web-0") {
					t.Errorf("%v does not name pod web-0 and %s", err, m)
				}
			}
		})
	}
	err := CheckImages("web-0", pod(ImagePortApp, "traefik:v3.6.0"), have)
	if want := "traefik:v3.6.0 (as docker.io/library/traefik:v3.6.0)"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("CheckImages = %v, want it to contain %q", err, want)
	}
}
