package main

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// makeImage runs `make image` with its own bin directory and returns the
// directory (holding stackdome and stackdome-image.tar) and the digest the
// tool printed.
func makeImage(t *testing.T) (dir, digest string) {
	t.Helper()
	dir = t.TempDir()
	cmd := exec.Command("make", "-s", "--no-print-directory", "-C", repoRoot, "image", "BIN="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("make image: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	lines := strings.Fields(stdout.String())
	if len(lines) == 0 || !strings.HasPrefix(lines[len(lines)-1], "sha256:") {
		t.Fatalf("make image printed no digest:\n%s", stdout.String())
	}
	return dir, lines[len(lines)-1]
}

// TestMakeImage builds the image twice from the checkout, as `make image`
// does, opens the tarball with nothing but the standard library and checks
// it against the OCI image spec: the digests, the config (user, entrypoint,
// labels, architecture, timestamps), the one layer (only /stackdome, mode
// 0755, root-owned, byte-identical to the binary make built, no shell), and
// that both builds gave the same digest and the same bytes.
func TestMakeImage(t *testing.T) {
	dirA, digestA := makeImage(t)
	dirB, digestB := makeImage(t)

	tarA, err := os.ReadFile(filepath.Join(dirA, "stackdome-image.tar"))
	if err != nil {
		t.Fatal(err)
	}
	tarB, err := os.ReadFile(filepath.Join(dirB, "stackdome-image.tar"))
	if err != nil {
		t.Fatal(err)
	}
	if digestA != digestB {
		t.Errorf("two builds of one commit gave digests %s and %s", digestA, digestB)
	}
	if !bytes.Equal(tarA, tarB) {
		t.Errorf("two builds of one commit gave different tarballs")
	}
	binary, err := os.ReadFile(filepath.Join(dirA, "stackdome"))
	if err != nil {
		t.Fatal(err)
	}

	revision := wantRevision(t)
	commitTime, err := strconv.ParseInt(git(t, "log", "-1", "--format=%ct"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	created := time.Unix(commitTime, 0).UTC()
	version := chartAppVersion(t)

	img := openArchive(t, tarA)
	if img.manifestDigest != digestA {
		t.Errorf("index.json names manifest %s, make image printed %s", img.manifestDigest, digestA)
	}
	wantRefs := map[string]string{
		"org.opencontainers.image.ref.name": version,
		"io.containerd.image.name":          chartImageRepository(t) + ":" + version,
	}
	if diff := cmp.Diff(wantRefs, img.refs); diff != "" {
		t.Errorf("index annotations (-want +got):\n%s", diff)
	}

	wantConfig := ociConfig{
		Architecture: runtime.GOARCH,
		OS:           "linux",
		Created:      created.Format(time.RFC3339),
	}
	wantConfig.Config.User = "65532:65532"
	wantConfig.Config.Entrypoint = []string{"/stackdome", "serve"}
	wantConfig.Config.WorkingDir = "/"
	wantConfig.Config.ExposedPorts = map[string]struct{}{"8080/tcp": {}, "8082/tcp": {}}
	wantConfig.Config.Labels = map[string]string{
		"org.opencontainers.image.created":  created.Format(time.RFC3339),
		"org.opencontainers.image.revision": revision,
		"org.opencontainers.image.source":   "https://github.com/stackdome/stackdome",
		"org.opencontainers.image.title":    "stackdome",
		"org.opencontainers.image.version":  version,
	}
	wantConfig.RootFS.Type = "layers"
	wantConfig.RootFS.DiffIDs = []string{sha(img.layerTar)}
	wantConfig.History = []ociHistory{{Created: created.Format(time.RFC3339), CreatedBy: "tools/image: /stackdome from make build"}}
	if diff := cmp.Diff(wantConfig, img.config); diff != "" {
		t.Errorf("image config (-want +got):\n%s", diff)
	}

	files := layerFiles(t, img.layerTar)
	if len(files) != 1 || files[0].hdr.Name != "stackdome" {
		var names []string
		for _, f := range files {
			names = append(names, f.hdr.Name)
		}
		t.Fatalf("layer holds %q, want only stackdome (no shell, no base)", names)
	}
	f := files[0]
	if f.hdr.Typeflag != tar.TypeReg || f.hdr.Mode != 0o755 || f.hdr.Uid != 0 || f.hdr.Gid != 0 || !f.hdr.ModTime.Equal(created) {
		t.Errorf("/stackdome: type %c mode %o owner %d:%d mtime %s, want a regular file, 0755, 0:0, %s",
			f.hdr.Typeflag, f.hdr.Mode, f.hdr.Uid, f.hdr.Gid, f.hdr.ModTime, created)
	}
	if !bytes.Equal(f.data, binary) {
		t.Errorf("/stackdome in the layer (%d bytes, %s) is not the binary make built (%d bytes, %s)",
			len(f.data), sha(f.data), len(binary), sha(binary))
	}

	// The binary depends on the source alone (make build: -buildvcs=false),
	// not on the kind of checkout; the labels name the commit.
	info, err := buildinfo.Read(bytes.NewReader(f.data))
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	for k, want := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true", "GOOS": "linux"} {
		if settings[k] != want {
			t.Errorf("build setting %s = %q, want %q", k, settings[k], want)
		}
	}
	for k, v := range settings {
		if strings.HasPrefix(k, "vcs") {
			t.Errorf("build setting %s=%s: the binary depends on the checkout, not only on the source", k, v)
		}
	}
}
