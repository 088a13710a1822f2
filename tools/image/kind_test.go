package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeKind is a kind that records its arguments and keeps a copy of the
// archive it is asked to load, beside itself.
const fakeKind = `#!/bin/sh
printf '%s\n' "$@" > "$0.args"
cp "$3" "$0.archive"
`

// TestMakeKindLoad: make kind-load hands kind the tarball make image wrote,
// for the cluster asked for; and the tarball is what containerd's importer
// (which kind runs on each node: ctr images import --all-platforms) stores
// under the chart's default image: an OCI layout, every blob of every
// platform present, named by io.containerd.image.name as a full reference.
func TestMakeKindLoad(t *testing.T) {
	kind := filepath.Join(t.TempDir(), "kind")
	if err := os.WriteFile(kind, []byte(fakeKind), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	stdout, stderr, err := runMake(t, nil, "kind-load", "KIND="+kind, "KIND_CLUSTER=stackdome-dev", "BIN="+dir)
	if err != nil {
		t.Fatalf("make kind-load: %v\n%s%s", err, stdout, stderr)
	}
	archive := filepath.Join(dir, "stackdome-image.tar")
	args := strings.Split(strings.TrimSpace(string(readFile(t, kind+".args"))), "\n")
	if diff := cmp.Diff([]string{"load", "image-archive", archive, "--name", "stackdome-dev"}, args); diff != "" {
		t.Errorf("make kind-load ran kind with (-want +got):\n%s", diff)
	}

	a := openArchive(t, readFile(t, kind+".archive"))
	want := chartImageRepository(t) + ":" + chartAppVersion(t)
	got := a.refs["io.containerd.image.name"]
	if got != want {
		t.Errorf("containerd would name the image %q; the chart pulls %q", got, want)
	}
	// containerd stores the name as written, and the kubelet asks for the
	// normalized reference: a name without a registry host would be looked
	// up as docker.io/library/… and pulled instead.
	if host, _, _ := strings.Cut(got, "/"); !strings.ContainsAny(host, ".:") && host != "localhost" {
		t.Errorf("containerd would name the image %q, which has no registry host", got)
	}
	if len(a.images) != len(platforms) {
		t.Errorf("the archive holds %d platforms' images, want %d", len(a.images), len(platforms))
	}
}

// TestMakeKindLoadWithoutKind: without kind, make kind-load says so, and
// builds nothing.
func TestMakeKindLoadWithoutKind(t *testing.T) {
	dir := t.TempDir()
	_, stderr, err := runMake(t, nil, "kind-load", "KIND=stackdome-test-no-such-kind", "BIN="+dir)
	if err == nil || !strings.Contains(stderr, "kind-load: stackdome-test-no-such-kind is not installed") {
		t.Fatalf("make kind-load without kind: %v\n%s", err, stderr)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("make kind-load without kind built %d files", len(entries))
	}
}
