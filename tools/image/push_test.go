package main

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestMakeImagePush pushes with `make image-push` to go-containerregistry's
// in-process registry on 127.0.0.1 and pulls back: the tag names the index
// make image built, by the same digest, and each platform's image is
// pullable by platform, with the binary make built for it.
func TestMakeImagePush(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	dir := t.TempDir()
	stdout, stderr, err := runMake(t, nil, "image-push", "REGISTRY="+host+"/team", "BIN="+dir)
	if err != nil {
		t.Fatalf("make image-push: %v\n%s%s", err, stdout, stderr)
	}
	built := digests(t, stdout)
	ref := host + "/team/stackdome:" + chartAppVersion(t)
	if want := ref + "@" + built["index"]; !strings.Contains(stdout, want+"\n") {
		t.Errorf("make image-push printed\n%s\nwant a line %s", stdout, want)
	}
	a := openArchive(t, readFile(t, filepath.Join(dir, "stackdome-image.tar")))
	if a.indexDigest != built["index"] {
		t.Fatalf("the tarball holds index %s, make printed %s", a.indexDigest, built["index"])
	}

	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(tag)
	if err != nil {
		t.Fatalf("pulling %s: %v", tag, err)
	}
	if d, _ := idx.Digest(); d.String() != built["index"] {
		t.Errorf("%s is index %s, make image built %s", tag, d, built["index"])
	}
	rawIndex, err := idx.RawManifest()
	if err != nil {
		t.Fatal(err)
	}
	var pulled ociIndex
	strict(t, "pulled index", rawIndex, &pulled)
	if diff := cmp.Diff(a.index, pulled); diff != "" {
		t.Errorf("the registry's index is not the tarball's (-tarball +registry):\n%s", diff)
	}

	for _, p := range platforms {
		t.Run(p.arch, func(t *testing.T) {
			img, err := remote.Image(tag, remote.WithPlatform(v1.Platform{OS: "linux", Architecture: p.arch}))
			if err != nil {
				t.Fatalf("pulling %s for %s: %v", tag, p.name, err)
			}
			if d, _ := img.Digest(); d.String() != built[p.name] {
				t.Errorf("%s for %s is manifest %s, make image built %s", tag, p.name, d, built[p.name])
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cf.Architecture != p.arch || cf.OS != "linux" {
				t.Errorf("%s for %s has a config for %s/%s", tag, p.name, cf.OS, cf.Architecture)
			}
			layers, err := img.Layers()
			if err != nil || len(layers) != 1 {
				t.Fatalf("%s for %s: layers %d, %v", tag, p.name, len(layers), err)
			}
			rc, err := layers[0].Uncompressed()
			if err != nil {
				t.Fatal(err)
			}
			layerTar, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Fatal(err)
			}
			files := layerFiles(t, layerTar)
			binary := readFile(t, filepath.Join(dir, "linux-"+p.arch, "stackdome"))
			if len(files) != 1 || !bytes.Equal(files[0].data, binary) {
				t.Errorf("the pulled layer for %s does not hold the binary make built for it", p.name)
			}
		})
	}
}

// TestMakeImagePushWantsARegistry: without REGISTRY, make image-push says
// what to set, and builds nothing.
func TestMakeImagePushWantsARegistry(t *testing.T) {
	dir := t.TempDir()
	_, stderr, err := runMake(t, nil, "image-push", "BIN="+dir)
	if err == nil || !strings.Contains(stderr, "image-push: set REGISTRY=host[:port][/path]") {
		t.Fatalf("make image-push without REGISTRY: %v\n%s", err, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("make image-push without REGISTRY built %d files", len(entries))
	}
}

// TestPlainHTTPPolicy: plain HTTP goes only to loopback registries, unless
// insecure; what is refused is never handed on, so never dialed.
func TestPlainHTTPPolicy(t *testing.T) {
	tests := map[string]struct {
		url      string
		insecure bool
		refused  bool
	}{
		"https anywhere":           {url: "https://ghcr.io/v2/"},
		"http to 127.0.0.1":        {url: "http://127.0.0.1:5001/v2/"},
		"http to another loopback": {url: "http://127.0.0.2:5001/v2/"},
		"http to ::1":              {url: "http://[::1]:5001/v2/"},
		"http to localhost":        {url: "http://localhost:5001/v2/"},
		"http to a .localhost":     {url: "http://kind-registry.localhost:5001/v2/"},
		"http to a private IP":     {url: "http://10.0.0.1:5000/v2/", refused: true},
		"http to a name":           {url: "http://registry.internal:5000/v2/", refused: true},
		"http to a name, insecure": {url: "http://registry.internal:5000/v2/", insecure: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var handedOn bool
			next := roundTripFunc(func(*http.Request) (*http.Response, error) {
				handedOn = true
				return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody}, nil
			})
			req, err := http.NewRequest(http.MethodGet, tc.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := plainHTTPPolicy{next: next, insecure: tc.insecure}.RoundTrip(req)
			if resp != nil {
				resp.Body.Close()
			}
			if tc.refused != (err != nil) || tc.refused == handedOn {
				t.Errorf("RoundTrip(%s): error %v, handed on %t; want refused %t", tc.url, err, handedOn, tc.refused)
			}
		})
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
