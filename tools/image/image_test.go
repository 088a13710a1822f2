package main

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// platforms are what make image builds, in the index's order.
var platforms = []struct {
	name, arch string
	machine    elf.Machine
}{
	{"linux/amd64", "amd64", elf.EM_X86_64},
	{"linux/arm64", "arm64", elf.EM_AARCH64},
}

// makeImage runs `make image` with its own bin directory and returns the
// directory (holding linux-<arch>/stackdome, stackdome-image.tar and the
// SBOM) and the digests the tool printed.
func makeImage(t *testing.T) (dir string, printed map[string]string) {
	t.Helper()
	dir = t.TempDir()
	stdout, stderr, err := runMake(t, nil, "image", "BIN="+dir)
	if err != nil {
		t.Fatalf("make image: %v\n%s%s", err, stdout, stderr)
	}
	return dir, digests(t, stdout)
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestMakeImage builds the image twice from the checkout, as `make image`
// does, opens the tarball with nothing but the standard library and checks
// it against the OCI image spec: one image index named as the chart pulls
// it, one image a platform with its platform in the index and the config;
// each config (user, entrypoint, labels, timestamps); each layer (only
// /stackdome, 0755, root-owned, byte-identical to the binary make built for
// that platform, an ELF for that machine whose build info says that GOARCH,
// no shell); and that both builds gave the same digests, the same tarball
// and the same SBOM.
func TestMakeImage(t *testing.T) {
	dirA, digestsA := makeImage(t)
	dirB, digestsB := makeImage(t)

	if diff := cmp.Diff(digestsA, digestsB); diff != "" {
		t.Errorf("two builds of one commit gave different digests (-first +second):\n%s", diff)
	}
	tarA := readFile(t, filepath.Join(dirA, "stackdome-image.tar"))
	if !bytes.Equal(tarA, readFile(t, filepath.Join(dirB, "stackdome-image.tar"))) {
		t.Errorf("two builds of one commit gave different tarballs")
	}
	sbomA := readFile(t, filepath.Join(dirA, "stackdome-image.sbom.cdx.json"))
	if !bytes.Equal(sbomA, readFile(t, filepath.Join(dirB, "stackdome-image.sbom.cdx.json"))) {
		t.Errorf("two builds of one commit gave different SBOMs")
	}

	commitTime, err := strconv.ParseInt(git(t, "log", "-1", "--format=%ct"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	created := time.Unix(commitTime, 0).UTC()
	version := chartAppVersion(t)
	labels := map[string]string{
		"org.opencontainers.image.created":  created.Format(time.RFC3339),
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.revision": wantRevision(t),
		"org.opencontainers.image.source":   "https://github.com/stackdome/stackdome",
		"org.opencontainers.image.title":    "stackdome",
		"org.opencontainers.image.version":  version,
	}

	a := openArchive(t, tarA)
	if a.indexDigest != digestsA["index"] {
		t.Errorf("index.json names index %s, make image printed %s", a.indexDigest, digestsA["index"])
	}
	wantRefs := map[string]string{
		"org.opencontainers.image.ref.name": version,
		"io.containerd.image.name":          chartImageRepository(t) + ":" + version,
	}
	if diff := cmp.Diff(wantRefs, a.refs); diff != "" {
		t.Errorf("index.json names the image (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(labels, a.index.Annotations); diff != "" {
		t.Errorf("image index annotations (-want +got):\n%s", diff)
	}
	var gotPlatforms []string
	for _, d := range a.index.Manifests {
		gotPlatforms = append(gotPlatforms, d.Platform.OS+"/"+d.Platform.Architecture)
	}
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm64"}, gotPlatforms); diff != "" {
		t.Fatalf("image index platforms (-want +got):\n%s", diff)
	}

	for _, p := range platforms {
		t.Run(p.arch, func(t *testing.T) {
			img := a.images[p.name]
			if img.manifestDigest != digestsA[p.name] {
				t.Errorf("the index names manifest %s, make image printed %s", img.manifestDigest, digestsA[p.name])
			}
			wantConfig := ociConfig{Architecture: p.arch, OS: "linux", Created: created.Format(time.RFC3339)}
			wantConfig.Config.User = "65532:65532"
			wantConfig.Config.Entrypoint = []string{"/stackdome", "serve"}
			wantConfig.Config.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
			wantConfig.Config.WorkingDir = "/"
			wantConfig.Config.ExposedPorts = map[string]struct{}{"8080/tcp": {}, "8081/tcp": {}, "8082/tcp": {}}
			wantConfig.Config.Labels = labels
			wantConfig.RootFS.Type = "layers"
			wantConfig.RootFS.DiffIDs = []string{sha(img.layerTar)}
			wantConfig.History = []ociHistory{{Created: created.Format(time.RFC3339), CreatedBy: "tools/image: /stackdome from make image"}}
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
			binary := readFile(t, filepath.Join(dirA, "linux-"+p.arch, "stackdome"))
			if !bytes.Equal(f.data, binary) {
				t.Errorf("/stackdome in the layer (%d bytes, %s) is not the binary make built for %s (%d bytes, %s)",
					len(f.data), sha(f.data), p.name, len(binary), sha(binary))
			}
			checkBinary(t, f.data, p.arch, p.machine)
		})
	}

	checkSBOM(t, sbomA, a, dirA, created)
}

// checkBinary: the binary in the layer runs on the platform the index says
// (its ELF header and its build info agree), is static, and depends on the
// source alone (make image: -buildvcs=false), not on the kind of checkout;
// the labels name the commit.
func checkBinary(t *testing.T, bin []byte, arch string, machine elf.Machine) {
	t.Helper()
	ef, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatalf("/stackdome is not an ELF file: %v", err)
	}
	if ef.Machine != machine || ef.OSABI != elf.ELFOSABI_NONE && ef.OSABI != elf.ELFOSABI_LINUX {
		t.Errorf("/stackdome is an ELF for %s (OS ABI %s), want %s", ef.Machine, ef.OSABI, machine)
	}
	for _, prog := range ef.Progs {
		if prog.Type == elf.PT_INTERP {
			t.Errorf("/stackdome asks for a dynamic loader: scratch has none")
		}
	}
	info, err := buildinfo.Read(bytes.NewReader(bin))
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	for k, want := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true", "GOOS": "linux", "GOARCH": arch} {
		if settings[k] != want {
			t.Errorf("build setting %s = %q, want %q", k, settings[k], want)
		}
	}
	// The commit reaches the binary by the linker instead (stackdome
	// version, stackdome_build_info; -X main.revision). -trimpath keeps
	// -ldflags out of the build info: the string itself is looked for.
	if rev := wantRevision(t); !bytes.Contains(bin, []byte(rev)) {
		t.Errorf("/stackdome does not hold its commit %s (make image: -ldflags -X main.revision)", rev)
	}
	for k, v := range settings {
		if strings.HasPrefix(k, "vcs") {
			t.Errorf("build setting %s=%s: the binary depends on the checkout, not only on the source", k, v)
		}
	}
}
