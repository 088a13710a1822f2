//go:build e2e

package framework

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The images the real-node suite runs, by the name a pod gives them: the
// chart's, the production manifest's, or the suite's own. None comes from a
// registry: BuildImages builds each as an OCI image layout tarball, which
// Node.Import hands to the node's containerd as `kind load image-archive`
// does. stackdome's own is StackdomeImage: its tag is the chart's
// appVersion.
const (
	// ImageMetacontroller is Metacontroller v4.17.2 built from the pinned
	// source, laid out as its Dockerfile lays it out.
	ImageMetacontroller = "ghcr.io/metacontroller/metacontroller:v4.17.2"
	// ImageTraefik is the name the Traefik chart 41.3.0 renders by default
	// (docker.io + traefik + its appVersion); containerd holds it as
	// docker.io/library/traefik:v3.7.11, the name the kubelet looks up.
	ImageTraefik = "docker.io/traefik:v3.7.11"
	// ImageHTTPBin is docs/install.md's first app, as the page names it:
	// go-httpbin v2.22.1 built from the Go module proxy, laid out as its
	// Dockerfile lays it out. containerd holds it as
	// docker.io/mccutchen/go-httpbin:2.22.1.
	ImageHTTPBin = "mccutchen/go-httpbin:2.22.1"
	// ImagePortApp is the suite's test workload (e2e/images/portapp).
	ImagePortApp = "stackdome.test/portapp:e2e"
	// ImagePause is the sandbox image: the node's containerd config must
	// name it as sandbox_image, or containerd tries to pull its own default.
	ImagePause = "registry.k8s.io/pause:3.10"
	// ImageCoreDNS is the node's CoreDNS v1.15.0 (e2e/tools/coredns), laid
	// out as registry.k8s.io's image is.
	ImageCoreDNS = "registry.k8s.io/coredns/coredns:v1.15.0"
)

// ImageArchive is one image BuildImages made: an OCI image layout tarball
// `ctr -n k8s.io images import` accepts (its index.json names the image in
// io.containerd.image.name).
type ImageArchive struct {
	// Ref is the name containerd stores the image under once imported:
	// the name a pod gives, normalized as the kubelet normalizes it
	// (NormalizeImage).
	Ref string
	// Path is the tarball.
	Path string
	// Digest is the digest of the image index the tarball's index.json
	// names: what `ctr images ls` reports for Ref.
	Digest string
}

// BuildImages builds every image the real-node suite runs (stackdome,
// Metacontroller, Traefik, CoreDNS, pause, portapp, go-httpbin) and returns their
// archives, in that order. Each third-party image holds its binary where
// the real image has it, with its user and entrypoint (images_layout.go).
// It pulls nothing from a registry and reaches no network but the Go module
// proxy (for a cold build of a binary). Archives are cached by content under
// the e2e cache (STACKDOME_E2E_CACHE, else ~/.cache/stackdome-e2e) in
// images/: an archive is packed again only when a binary or its layout
// changed. stackdome's is `make image`'s own bin/stackdome-image.tar.
// Progress goes to stderr.
func BuildImages(ctx context.Context, repoRoot string) ([]ImageArchive, error) {
	start := time.Now()
	stackdome, err := buildStackdomeImage(ctx, repoRoot)
	if err != nil {
		return nil, err
	}
	layouts, err := imageLayouts(ctx, repoRoot)
	if err != nil {
		return nil, err
	}
	packed, err := packImages(ctx, repoRoot, layouts)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "e2e/images: %d images ready in %s\n", 1+len(packed), time.Since(start).Round(time.Second))
	return append([]ImageArchive{stackdome}, packed...), nil
}

// StackdomeImage is the name `make image` gives stackdome's image,
// ghcr.io/stackdome/stackdome:<the chart's appVersion> (`make version`):
// the chart's default image.
func StackdomeImage(ctx context.Context, repoRoot string) (string, error) {
	out, err := makeTarget(ctx, repoRoot, "-s", "version")
	if err != nil {
		return "", err
	}
	v := strings.TrimSpace(out)
	if v == "" || strings.ContainsAny(v, " \n/:") {
		return "", fmt.Errorf("make version printed %q, want a version", out)
	}
	return "ghcr.io/stackdome/stackdome:" + v, nil
}

// buildStackdomeImage runs `make image` (go build decides what is stale)
// and returns bin/stackdome-image.tar, a linux/amd64 and linux/arm64
// index. containerd's importer keeps the whole index under the name and
// unpacks the platform it runs on, so the kubelet starts the amd64 image
// on this machine.
func buildStackdomeImage(ctx context.Context, repoRoot string) (ImageArchive, error) {
	ref, err := StackdomeImage(ctx, repoRoot)
	if err != nil {
		return ImageArchive{}, err
	}
	fmt.Fprintf(os.Stderr, "e2e/images: make image (%s)\n", ref)
	out, err := makeTarget(ctx, repoRoot, "--no-print-directory", "image")
	if err != nil {
		return ImageArchive{}, fmt.Errorf("building image %s: %w", ref, err)
	}
	a := ImageArchive{Ref: ref, Path: filepath.Join(repoRoot, "bin", "stackdome-image.tar")}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == "index" {
			a.Digest = f[1]
		}
	}
	if a.Digest == "" {
		return ImageArchive{}, fmt.Errorf("building image %s: make image printed no index digest:\n%s", ref, out)
	}
	return a, nil
}

// makeTarget runs make in repoRoot and returns its stdout; stderr passes
// through.
func makeTarget(ctx context.Context, repoRoot string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "make", args...)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("make %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}
