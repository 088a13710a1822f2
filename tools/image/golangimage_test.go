package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// dockerfileBuilder is what the Dockerfile's build stage starts from: the
// image (its FROM, with ARG GO_VERSION's default put in) and the Go release
// it names.
type dockerfileBuilder struct {
	image, goVersion string
}

// readDockerfileBuilder reads the build stage of the Dockerfile at the
// repository's root: `ARG GO_VERSION=<v>` and `FROM … <image> AS build`.
func readDockerfileBuilder(t *testing.T) dockerfileBuilder {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	version := regexp.MustCompile(`(?m)^ARG GO_VERSION=(\S+)$`).FindSubmatch(b)
	from := regexp.MustCompile(`(?m)^FROM (?:--platform=\S+ )?(\S+) AS build$`).FindSubmatch(b)
	if version == nil || from == nil {
		t.Fatalf("Dockerfile: want ARG GO_VERSION=<version> and FROM [--platform=…] <image> AS build")
	}
	v := string(version[1])
	return dockerfileBuilder{
		image:     strings.NewReplacer("${GO_VERSION}", v, "$GO_VERSION", v).Replace(string(from[1])),
		goVersion: v,
	}
}

// goEnv is `go env name` of the Go running the test.
func goEnv(t *testing.T, name string) string {
	t.Helper()
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		t.Fatalf("go env %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

// golangImage stores, under the name the Dockerfile's build stage starts
// from, a stand-in for Docker Hub's golang image made from this machine's
// Go: GOROOT at /usr/local/go, the official image's GOPATH, PATH,
// GOTOOLCHAIN and HOME, and /bin/sh (the machine's, with the libraries
// ldd names) for the build's shell-form RUN. Nothing is pulled. The caller
// has checked that this Go is the release the Dockerfile names.
func (e *engine) golangImage(t *testing.T, name string) {
	t.Helper()
	ctr := strings.TrimSpace(e.run(t, "buildah", "from", "--pull-never", "scratch"))
	root := strings.TrimSpace(e.run(t, "buildah", "mount", ctr))
	for _, d := range []string{"usr/local", "bin", "tmp", "root", "go"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(root, "tmp"), 0o1777); err != nil {
		t.Fatal(err)
	}
	copyPath(t, goEnv(t, "GOROOT"), filepath.Join(root, "usr/local/go"))

	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	copyPath(t, sh, filepath.Join(root, "bin/sh"))
	ldd, err := exec.Command("ldd", sh).Output()
	if err != nil {
		t.Fatalf("ldd %s: %v", sh, err)
	}
	for _, lib := range regexp.MustCompile(`(/\S+) \(0x`).FindAllStringSubmatch(string(ldd), -1) {
		dst := filepath.Join(root, lib[1])
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		copyPath(t, lib[1], dst)
	}
	e.run(t, "buildah", "umount", ctr)
	e.run(t, "buildah", "config", "--os", "linux", "--arch", goEnv(t, "GOHOSTARCH"),
		"--env", "PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"--env", "GOPATH=/go", "--env", "GOTOOLCHAIN=local", "--env", "HOME=/root",
		"--env", "GOLANG_VERSION="+strings.TrimPrefix(goEnv(t, "GOVERSION"), "go"),
		"--workingdir", "/go", ctr)
	e.run(t, "buildah", "commit", "--quiet", "--rm", ctr, name)
}

// copyPath copies a file or a tree, following a symbolic link given as src
// and keeping modes and those inside a tree.
func copyPath(t *testing.T, src, dst string) {
	t.Helper()
	if out, err := exec.Command("cp", "-R", "-H", "--preserve=mode,timestamps", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp %s %s: %v\n%s", src, dst, err, out)
	}
}

// checkGoRelease fails unless this machine's Go is the release the
// Dockerfile builds with: only then are the two images' binaries the same
// bytes.
func checkGoRelease(t *testing.T, b dockerfileBuilder) {
	t.Helper()
	if got := goEnv(t, "GOVERSION"); got != "go"+b.goVersion {
		t.Fatalf("this machine's Go is %s and the Dockerfile builds with Go %s (ARG GO_VERSION): "+
			"make image and the Dockerfile must compile with one release to give one binary; bump GO_VERSION%s",
			got, b.goVersion, fmt.Sprintf(" to %s", strings.TrimPrefix(got, "go")))
	}
}
