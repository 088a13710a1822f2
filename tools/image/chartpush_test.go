package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Helm's media types for a chart in an OCI registry (helm.sh/helm/v3
// pkg/registry/constants.go).
const (
	helmConfigMedia = "application/vnd.cncf.helm.config.v1+json"
	helmChartMedia  = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
)

// helmEnv keeps Helm's configuration, cache and registry credentials in
// the test's own directories: nothing of the machine is read or written.
func helmEnv(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	return []string{
		"HELM_CONFIG_HOME=" + filepath.Join(dir, "config"),
		"HELM_CACHE_HOME=" + filepath.Join(dir, "cache"),
		"HELM_DATA_HOME=" + filepath.Join(dir, "data"),
		"HELM_REGISTRY_CONFIG=" + filepath.Join(dir, "registry.json"),
	}
}

// TestMakeChartPush pushes the chart with `make chart-push` to
// go-containerregistry's in-process registry on 127.0.0.1 (the one
// TestMakeImagePush pushes the image to) and reads it back: the tag is the
// chart's version under $REGISTRY/charts/stackdome; the manifest is Helm's
// (an OCI image manifest, Helm's config and one chart layer); the config
// names the chart and its versions; the layer is the package make wrote,
// byte for byte; and helm itself reads the chart back from the oci:// URL
// the install guide gives.
func TestMakeChartPush(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	version, appVersion := chartField(t, "version"), chartAppVersion(t)

	dir := t.TempDir()
	env := helmEnv(t)
	stdout, stderr, err := runMake(t, env, "chart-push", "REGISTRY="+host+"/team", "CHART_PACKAGE_DIR="+dir)
	if err != nil {
		t.Fatalf("make chart-push: %v\n%s%s", err, stdout, stderr)
	}
	ref := host + "/team/charts/stackdome:" + version
	if out := stdout + stderr; !strings.Contains(out, "Pushed: "+ref+"\n") {
		t.Errorf("make chart-push printed\n%s\nwant a line Pushed: %s", out, ref)
	}
	pkg := readFile(t, filepath.Join(dir, "stackdome-"+version+".tgz"))

	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Get(tag)
	if err != nil {
		t.Fatalf("pulling %s: %v", tag, err)
	}
	// Helm writes no mediaType into the manifest; the registry has it
	// from the push's Content-Type.
	var manifest struct {
		SchemaVersion int          `json:"schemaVersion"`
		Config        descriptor   `json:"config"`
		Layers        []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(desc.Manifest, &manifest); err != nil {
		t.Fatal(err)
	}
	if manifest.SchemaVersion != 2 || string(desc.MediaType) != mediaManifest || manifest.Config.MediaType != helmConfigMedia ||
		len(manifest.Layers) != 1 || manifest.Layers[0].MediaType != helmChartMedia {
		t.Fatalf("%s is not a Helm chart (config %s, one layer %s):\n%s", tag, helmConfigMedia, helmChartMedia, desc.Manifest)
	}
	repo := tag.Context()
	config := pullBlob(t, repo, manifest.Config.Digest)
	var meta struct{ Name, Version, AppVersion string }
	if err := json.Unmarshal(config, &meta); err != nil {
		t.Fatal(err)
	}
	if want := (struct{ Name, Version, AppVersion string }{"stackdome", version, appVersion}); meta != want {
		t.Errorf("the chart's config says %+v, want %+v", meta, want)
	}
	layer := pullBlob(t, repo, manifest.Layers[0].Digest)
	if !bytes.Equal(layer, pkg) {
		t.Errorf("the chart layer (%s) is not the package helm package wrote (%s)", sha(layer), sha(pkg))
	}
	if chartYAML := tgzFile(t, layer, "stackdome/Chart.yaml"); !bytes.Contains(chartYAML, []byte("\nversion: "+version+"\n")) {
		t.Errorf("the chart layer's stackdome/Chart.yaml does not say version: %s:\n%s", version, chartYAML)
	}

	helm := exec.Command(filepath.Join(repoRoot, "bin", "helm"), "show", "chart", "--plain-http",
		"oci://"+host+"/team/charts/stackdome", "--version", version)
	helm.Env = append(os.Environ(), env...)
	out, err := helm.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("name: stackdome\n")) || !bytes.Contains(out, []byte("version: "+version+"\n")) {
		t.Errorf("helm show chart oci://%s/team/charts/stackdome --version %s: %v\n%s", host, version, err, out)
	}
}

// TestMakeChartPushPlainHTTP: make chart-push asks helm for plain HTTP
// exactly when push's policy allows it (isLoopback, or INSECURE=1), and
// pushes to $(REGISTRY)/charts; a stand-in helm records what it is asked.
func TestMakeChartPushPlainHTTP(t *testing.T) {
	helm := filepath.Join(t.TempDir(), "helm")
	if err := os.WriteFile(helm, []byte("#!/bin/sh\nprintf '%s\\n' \"$*\" >> \"$0.args\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		registry string
		insecure bool
		plain    bool
	}{
		"127.0.0.1":             {registry: "127.0.0.1:5001/team", plain: true},
		"another loopback":      {registry: "127.0.0.2:5001", plain: true},
		"::1":                   {registry: "[::1]:5001", plain: true},
		"localhost":             {registry: "localhost:5001", plain: true},
		"a .localhost":          {registry: "kind-registry.localhost:5001", plain: true},
		"a name":                {registry: "registry.internal:5000"},
		"a name like loopback":  {registry: "127.0.0.1.example.com"},
		"a private IP":          {registry: "10.0.0.1:5000"},
		"ghcr.io":               {registry: "ghcr.io/stackdome"},
		"a name, with INSECURE": {registry: "registry.internal:5000", insecure: true, plain: true},
	}
	version := chartField(t, "version")
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			os.Remove(helm + ".args")
			args := []string{"chart-push", "HELM=" + helm, "REGISTRY=" + tc.registry, "CHART_PACKAGE_DIR=" + t.TempDir()}
			if tc.insecure {
				args = append(args, "INSECURE=1")
			}
			if stdout, stderr, err := runMake(t, nil, args...); err != nil {
				t.Fatalf("make chart-push: %v\n%s%s", err, stdout, stderr)
			}
			calls := strings.Split(strings.TrimSpace(string(readFile(t, helm+".args"))), "\n")
			if len(calls) != 2 || !strings.HasPrefix(calls[0], "package chart --destination ") {
				t.Fatalf("helm was run with %q, want package then push", calls)
			}
			push := strings.Fields(calls[1])
			want := []string{"push", push[1], "oci://" + tc.registry + "/charts"}
			if tc.plain {
				want = append(want, "--plain-http")
			}
			if !strings.HasSuffix(push[1], "/stackdome-"+version+".tgz") {
				t.Errorf("helm push %s, want the package stackdome-%s.tgz", push[1], version)
			}
			if diff := cmp.Diff(want, push); diff != "" {
				t.Errorf("helm push (-want +got):\n%s", diff)
			}
		})
	}
}

// pullBlob fetches a blob of repo and checks its digest.
func pullBlob(t *testing.T, repo name.Repository, digest string) []byte {
	t.Helper()
	layer, err := remote.Layer(repo.Digest(digest))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := layer.Compressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if sha(b) != digest {
		t.Fatalf("blob %s hashes to %s", digest, sha(b))
	}
	return b
}

// tgzFile is the content of one file of a gzipped tarball.
func tgzFile(t *testing.T, tgz []byte, path string) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("no %s in the chart package", path)
		}
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Name == path {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
}
