// No build tag: the untagged tests of docs/install.md against the pinned
// upstream sources run in `make test`.

package framework

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// The pinned upstream sources in shared/vendor/: Metacontroller v4.17.2's
// tree (metacontroller/metacontroller@v4.17.2, `git archive v4.17.2`) and
// the Traefik Helm chart 41.3.0 (traefik/traefik-helm-chart@v41.3.0, its
// traefik/ directory), and where shared/ is.

// SharedDir is where shared/ is: STACKDOME_SHARED, else <root>/../shared
// (beside the repository, as in CI).
func SharedDir(root string) string {
	if d := os.Getenv("STACKDOME_SHARED"); d != "" {
		return d
	}
	return filepath.Join(root, "..", "shared")
}

// Archives of shared/vendor/, each a tree under one top directory.
const (
	MetacontrollerArchive = "metacontroller-4.17.2.tar.gz" // metacontroller-4.17.2/
	TraefikChartArchive   = "traefik-helm-chart-41.3.0.tar.gz"
	TraefikChartDir       = "traefik-helm-chart-41.3.0/traefik" // the chart inside it
)

// VendorArchive is the path of a pinned archive in shared/vendor/. Without
// it the test fails, in CI and out, with one line saying what to set: a
// test of the real component never falls back to something of ours. The
// repository root is the parent of the working directory, which go test
// makes the calling package's (e2e/).
func VendorArchive(t *testing.T, name string) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(SharedDir(root), "vendor", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s is not there (%v): set STACKDOME_SHARED to a shared/ checkout holding vendor/%s", p, err, name)
	}
	return p
}

// ReadArchive returns the files of a .tar.gz under prefix (a directory
// inside it), by their path relative to prefix; keep selects which.
func ReadArchive(archive, prefix string, keep func(rel string) bool) (map[string][]byte, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", archive, err)
	}
	files := map[string][]byte{}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", archive, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		rel, ok := strings.CutPrefix(path.Clean(h.Name), prefix+"/")
		if !ok || !keep(rel) {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", archive, h.Name, err)
		}
		files[rel] = data
	}
}

// ExtractArchive writes the files of a .tar.gz under prefix into dir.
func ExtractArchive(t *testing.T, archive, prefix, dir string) {
	t.Helper()
	files, err := ReadArchive(archive, prefix, func(string) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("%s holds nothing under %s/", archive, prefix)
	}
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
			t.Fatalf("%s: %s is outside %s/", archive, rel, prefix)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
