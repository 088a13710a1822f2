package main

import (
	"bytes"
	"errors"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestDockerfileImage builds the Dockerfile at the repository's root with
// Buildah, as `buildah bud --platform linux/amd64,linux/arm64` does for a
// platform team, offline (no registry, no network in the build: its base
// image is this machine's Go, stored under the name the Dockerfile pulls,
// and its modules come from this machine's module cache as a read-only
// file:// GOPROXY), and holds each platform's image equal to make image's:
// the same files with the same modes and owners, /stackdome the same bytes
// (the same Go, flags and source give the same binary), the same user,
// entrypoint, command, environment, working directory, ports and labels.
// Then Podman runs it (no bridge network): version says what make image's
// binary says, and serve answers /healthz and a golden sync on loopback as
// uid 65532. The machine's mounts and firewall are as before.
func TestDockerfileImage(t *testing.T) {
	before := hostState(t)
	t.Cleanup(func() {
		if diff := cmp.Diff(before, hostState(t)); diff != "" {
			t.Errorf("the test changed the machine's mounts or firewall (-before +after):\n%s", diff)
		}
	})
	builder := readDockerfileBuilder(t)
	checkGoRelease(t, builder)

	// One commit, read once, for both builds: the checkout may move while
	// the test runs.
	revision, commitTime := wantRevision(t), git(t, "log", "-1", "--format=%ct")
	secs, err := strconv.ParseInt(commitTime, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	stdout, stderr, err := runMake(t, nil, "image", "BIN="+dir, "REVISION="+revision, "SOURCE_DATE_EPOCH="+commitTime)
	if err != nil {
		t.Fatalf("make image: %v\n%s%s", err, stdout, stderr)
	}
	want := makeImageViews(t, openArchive(t, readFile(t, filepath.Join(dir, "stackdome-image.tar"))))

	e := newEngine(t)
	e.golangImage(t, builder.image)
	bud := func(list string) time.Duration {
		start := time.Now()
		// Buildah 1.28 (Debian 12) honours FROM --platform=$BUILDPLATFORM
		// but does not set BUILDPLATFORM itself, as BuildKit does.
		e.run(t, "buildah", "bud", "--pull-never", "--network", "none", "--layers", "--identity-label=false",
			"--platform", "linux/amd64,linux/arm64", "--manifest", list,
			"--build-arg", "BUILDPLATFORM=linux/"+goEnv(t, "GOHOSTARCH"),
			"--volume", filepath.Join(goEnv(t, "GOMODCACHE"), "cache", "download")+":/goproxy:ro",
			"--build-arg", "GOPROXY=file:///goproxy",
			"--build-arg", "VERSION="+chartAppVersion(t),
			"--build-arg", "REVISION="+revision,
			"--build-arg", "CREATED="+time.Unix(secs, 0).UTC().Format(time.RFC3339),
			repoRoot)
		return time.Since(start)
	}
	cold := bud(dockerfileList)
	warm := bud(dockerfileList + "-again")
	t.Logf("buildah bud, linux/amd64 and linux/arm64: cold %s, warm (every step cached) %s", cold.Round(time.Second), warm.Round(time.Second))

	layout := filepath.Join(e.dir, "oci")
	e.run(t, "buildah", "manifest", "push", "--all", "--quiet", dockerfileList, "oci:"+layout)
	got := layoutViews(t, layout)
	if len(got) != len(platforms) {
		t.Errorf("the Dockerfile's build holds %d platforms' images, make image's %d", len(got), len(platforms))
	}
	for _, p := range platforms {
		t.Run(p.arch, func(t *testing.T) {
			w, g := want[p.name], got[p.name]
			if g.Binary == nil {
				t.Fatalf("the Dockerfile's %s image has no /%s", p.name, binaryPath)
			}
			if !bytes.Equal(w.Binary, g.Binary) {
				t.Errorf("/stackdome: the Dockerfile built %d bytes (%s), make image %d bytes (%s) for %s",
					len(g.Binary), sha(g.Binary), len(w.Binary), sha(w.Binary), p.name)
			}
			checkBinary(t, g.Binary, p.arch, p.machine)
			w.Binary, g.Binary = nil, nil
			if diff := cmp.Diff(w, g); diff != "" {
				t.Errorf("make image's %s image and the Dockerfile's differ (-make image +Dockerfile):\n%s", p.name, diff)
			}
		})
	}

	host := "linux/" + goEnv(t, "GOHOSTARCH")
	hostBinary := filepath.Join(dir, "linux-"+goEnv(t, "GOHOSTARCH"), binaryPath)
	checkVersion(t, e, host, hostBinary)
	checkServe(t, e, host)
}

// dockerfileList is the manifest list the Dockerfile's images are built into.
const dockerfileList = "localhost/stackdome-dockerfile:test"

// checkVersion: `stackdome version` in the Dockerfile's image prints what
// make image's binary prints, with the exit status it exits with, and the
// version is the chart's appVersion. Before stackdome had a version
// command, both refused it alike; then --help stands in.
func checkVersion(t *testing.T, e *engine, platform, hostBinary string) {
	t.Helper()
	wantOut, wantErr := exec.Command(hostBinary, "version").Output()
	cmd := e.command("podman", "run", "--rm", "--pull", "never", "--network", "none", "--cgroup-parent", e.cgroupParent,
		"--platform", platform, "--entrypoint", "/"+binaryPath, dockerfileList, "version")
	gotOut, gotErr := cmd.Output()
	if exitCode(gotErr) != exitCode(wantErr) || !bytes.Equal(gotOut, wantOut) {
		t.Errorf("stackdome version: the Dockerfile's image printed %q and exited %d; make image's binary %q, %d (%v)",
			gotOut, exitCode(gotErr), wantOut, exitCode(wantErr), gotErr)
	}
	if wantErr == nil {
		if version := chartAppVersion(t); !bytes.Contains(gotOut, []byte(version)) {
			t.Errorf("stackdome version printed %q, which does not name the version %s", gotOut, version)
		}
		return
	}
	t.Logf("stackdome has no version command (%v); checking --help instead", wantErr)
	e.run(t, "podman", "run", "--rm", "--pull", "never", "--network", "none", "--cgroup-parent", e.cgroupParent,
		"--platform", platform, "--entrypoint", "/"+binaryPath, dockerfileList, "--help")
}

// exitCode is a command's exit status: 0 for no error, -1 when it did not
// run.
func exitCode(err error) int {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	default:
		return -1
	}
}
