//go:build e2e

package framework

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"
)

// httpbinVersion is the go-httpbin of ImageHTTPBin: its module has no
// dependencies.
const httpbinVersion = "v2.22.1"

// imagesCache is where BuildImages keeps binaries and archives:
// STACKDOME_E2E_CACHE (else ~/.cache/stackdome-e2e), images/.
func imagesCache() (string, error) {
	root := os.Getenv("STACKDOME_E2E_CACHE")
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("finding the e2e cache: %w", err)
		}
		root = filepath.Join(home, ".cache", "stackdome-e2e")
	}
	dir := filepath.Join(root, "images")
	return dir, os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
}

// lockImagesCache holds an exclusive lock on the images cache until the
// returned function is called: a second BuildImages waits, then finds
// everything built.
func lockImagesCache(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}

// goCommand is a go command with the environment every build here shares:
// static Linux binaries for this machine's architecture, no workspace.
func goCommand(ctx context.Context, dir string, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// buildImageProgram builds e2e/images/<name> into the cache (go build
// decides what is stale) and returns the binary's path.
func buildImageProgram(ctx context.Context, repoRoot, name string) (string, error) {
	dir, err := imagesCache()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "bin", name)
	cmd := goCommand(ctx, repoRoot, nil, "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", out, "./e2e/images/"+name)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./e2e/images/%s: %w", name, err)
	}
	return out, nil
}

// buildCoreDNS returns CoreDNS's binary: the node's (NodeBinaries:
// e2e/tools/coredns, CoreDNS v1.15.0 with the plugins the node's Corefile
// uses), so that it is built once.
func buildCoreDNS(ctx context.Context) (string, error) {
	dir, err := NodeBinaries(ctx)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "coredns"), nil
}

// buildHTTPBin returns go-httpbin's binary, built from the Go module proxy
// the first time as its Makefile builds it (`-ldflags="-s -w"`).
func buildHTTPBin(ctx context.Context) (string, error) {
	return goInstall(ctx, "go-httpbin", "github.com/mccutchen/go-httpbin/v2/cmd/go-httpbin", httpbinVersion, "-ldflags=-s -w")
}

// goInstall returns the binary name of `go install pkg@version` (its own
// go.mod decides its dependencies), built into the images cache the first
// time with the flags the node's binaries are built with, so the Go build
// cache serves a second build.
func goInstall(ctx context.Context, name, pkg, version string, flags ...string) (string, error) {
	dir, err := imagesCache()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "bin", name+"-"+version)
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	gobin, err := os.MkdirTemp(dir, "."+name+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(gobin)
	fmt.Fprintf(os.Stderr, "e2e/images: go install %s@%s\n", pkg, version)
	start := time.Now()
	args := append(append([]string{"install", "-trimpath"}, flags...), pkg+"@"+version)
	if err := goCommand(ctx, os.TempDir(), []string{"GOBIN=" + gobin, "GOFLAGS="}, args...).Run(); err != nil {
		return "", fmt.Errorf("go install %s@%s: %w", pkg, version, err)
	}
	if err := os.Rename(filepath.Join(gobin, name), out); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "e2e/images: built %s in %s\n", name, time.Since(start).Round(time.Second))
	return out, nil
}

// packImages returns an archive of each layout, packing with tools/image
// (one `go run . pack` for all) only those whose cached archive is missing.
// The cache key of an archive hashes its layout, the bytes of every file
// it copies, and tools/image's source.
func packImages(ctx context.Context, repoRoot string, layouts []imageLayout) ([]ImageArchive, error) {
	dir, err := imagesCache()
	if err != nil {
		return nil, err
	}
	unlock, err := lockImagesCache(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	tool, err := hashFiles(filepath.Join(repoRoot, "tools", "image"), func(n string) bool {
		return n == "go.mod" || n == "go.sum" || (strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go"))
	})
	if err != nil {
		return nil, err
	}

	type packEntry struct {
		imageLayout
		Out string `json:"out"`
	}
	var stale []packEntry
	archives := make([]ImageArchive, len(layouts))
	for i, l := range layouts {
		key, err := layoutKey(l, tool)
		if err != nil {
			return nil, fmt.Errorf("building image %s: %w", l.Name, err)
		}
		path := filepath.Join(dir, strings.NewReplacer("/", "_", ":", "_").Replace(l.Name)+"-"+key+".oci.tar")
		archives[i] = ImageArchive{Ref: l.Name, Path: path}
		if d, err := os.ReadFile(path + ".digest"); err == nil {
			archives[i].Digest = strings.TrimSpace(string(d))
			continue
		}
		stale = append(stale, packEntry{l, path})
	}
	if len(stale) == 0 {
		return archives, nil
	}

	names := make([]string, len(stale))
	for i, s := range stale {
		names[i] = s.Name
	}
	fmt.Fprintf(os.Stderr, "e2e/images: packing %s\n", strings.Join(names, ", "))
	spec, err := json.Marshal(stale)
	if err != nil {
		return nil, err
	}
	specFile := filepath.Join(dir, ".pack.json")
	if err := os.WriteFile(specFile, spec, 0o644); err != nil {
		return nil, err
	}
	defer os.Remove(specFile)
	cmd := exec.CommandContext(ctx, "go", "run", ".", "pack", "-spec", specFile)
	cmd.Dir = filepath.Join(repoRoot, "tools", "image")
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("building images %s (tools/image pack): %w", strings.Join(names, ", "), err)
	}
	digests := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			digests[f[0]] = f[1]
		}
	}
	for i := range archives {
		if archives[i].Digest != "" {
			continue
		}
		d, ok := digests[archives[i].Ref]
		if !ok {
			return nil, fmt.Errorf("building image %s: tools/image pack printed no digest for it:\n%s", archives[i].Ref, out)
		}
		archives[i].Digest = d
		// The digest file marks the archive complete: it is written last.
		if err := os.WriteFile(archives[i].Path+".digest", []byte(d+"\n"), 0o644); err != nil {
			return nil, err
		}
	}
	return archives, nil
}

// layoutKey hashes what decides an archive's bytes: the layout with each
// copied file's content in place of its path, and the packing tool.
func layoutKey(l imageLayout, tool string) (string, error) {
	l.Files = append([]imageFile(nil), l.Files...)
	for i, f := range l.Files {
		if f.Source == "" {
			continue
		}
		h, err := hashFile(f.Source)
		if err != nil {
			return "", err
		}
		l.Files[i].Source = "sha256:" + h
	}
	raw, err := json.Marshal(l)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append(raw, tool...))
	return hex.EncodeToString(sum[:8]), nil
}

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hashing %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// hashFiles hashes the names and contents of dir's files that keep says
// to, in name order.
func hashFiles(dir string, keep func(string) bool) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && keep(e.Name()) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		h, err := hashFile(filepath.Join(dir, n))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%s %s\n", h, n)
	}
	sum := sha256.Sum256(b.Bytes())
	return hex.EncodeToString(sum[:]), nil
}
