package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// Reading an image tarball with the standard library only, as a runtime
// would, so that the check does not share code with what it checks.

// ociConfig is the part of the OCI image config the image sets; unknown
// fields fail the decode, so nothing else may appear.
type ociConfig struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Created      string `json:"created"`
	Config       struct {
		User         string              `json:"User"`
		Entrypoint   []string            `json:"Entrypoint"`
		Cmd          []string            `json:"Cmd,omitempty"`
		Env          []string            `json:"Env,omitempty"`
		WorkingDir   string              `json:"WorkingDir"`
		ExposedPorts map[string]struct{} `json:"ExposedPorts"`
		Labels       map[string]string   `json:"Labels"`
	} `json:"config"`
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
	History []ociHistory `json:"history"`
}

type ociHistory struct {
	Created   string `json:"created"`
	CreatedBy string `json:"created_by"`
}

type ociPlatform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

type descriptor struct {
	MediaType    string            `json:"mediaType"`
	Size         int64             `json:"size"`
	Digest       string            `json:"digest"`
	Platform     *ociPlatform      `json:"platform,omitempty"`
	ArtifactType string            `json:"artifactType,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
}

type ociIndex struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType"`
	Manifests     []descriptor      `json:"manifests"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// openedArchive is a multi-platform OCI layout tarball, read.
type openedArchive struct {
	names       []string          // tar entries, in order
	indexDigest string            // the one image index index.json names
	refs        map[string]string // its annotations in index.json
	index       ociIndex
	images      map[string]openedImage // by "os/arch"
}

type openedImage struct {
	manifestDigest string
	config         ociConfig
	layerTar       []byte // uncompressed
}

const (
	mediaIndex    = "application/vnd.oci.image.index.v1+json"
	mediaManifest = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig   = "application/vnd.oci.image.config.v1+json"
	mediaLayer    = "application/vnd.oci.image.layer.v1.tar+gzip"
)

// openArchive reads an OCI image layout tarball the way containerd's
// importer does (oci-layout present: index.json → image index → each
// platform's manifest → config and layers), checking every blob against its
// digest and size: `ctr images import --all-platforms` fails on a missing
// one.
func openArchive(t *testing.T, archive []byte) openedArchive {
	t.Helper()
	entries := map[string][]byte{}
	var a openedArchive
	tr := tar.NewReader(bytes.NewReader(archive))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		entries[hdr.Name] = b
		a.names = append(a.names, hdr.Name)
	}
	if got := string(entries["oci-layout"]); got != `{"imageLayoutVersion":"1.0.0"}` {
		t.Fatalf("oci-layout = %q", got)
	}
	if _, ok := entries["manifest.json"]; ok {
		t.Errorf("the archive holds a Docker manifest.json, which can name only one platform's image")
	}
	blob := func(d descriptor) []byte {
		t.Helper()
		b, ok := entries["blobs/"+strings.Replace(d.Digest, ":", "/", 1)]
		if !ok {
			t.Fatalf("no blob %s", d.Digest)
		}
		if sha(b) != d.Digest || int64(len(b)) != d.Size {
			t.Fatalf("blob %s: content hashes to %s, %d bytes, descriptor says %d", d.Digest, sha(b), len(b), d.Size)
		}
		return b
	}

	var top ociIndex
	strict(t, "index.json", entries["index.json"], &top)
	if top.SchemaVersion != 2 || top.MediaType != mediaIndex || len(top.Manifests) != 1 || top.Manifests[0].MediaType != mediaIndex {
		t.Fatalf("index.json names %+v, want one image index", top)
	}
	a.indexDigest, a.refs = top.Manifests[0].Digest, top.Manifests[0].Annotations
	strict(t, "image index", blob(top.Manifests[0]), &a.index)
	if a.index.SchemaVersion != 2 || a.index.MediaType != mediaIndex {
		t.Fatalf("image index: %+v", a.index)
	}

	a.images = map[string]openedImage{}
	for _, d := range a.index.Manifests {
		if d.MediaType != mediaManifest || d.Platform == nil {
			t.Fatalf("image index lists %+v, want image manifests with their platform", d)
		}
		var manifest struct {
			SchemaVersion int          `json:"schemaVersion"`
			MediaType     string       `json:"mediaType"`
			Config        descriptor   `json:"config"`
			Layers        []descriptor `json:"layers"`
		}
		strict(t, "manifest "+d.Digest, blob(d), &manifest)
		if manifest.SchemaVersion != 2 || manifest.MediaType != mediaManifest || manifest.Config.MediaType != mediaConfig ||
			len(manifest.Layers) != 1 || manifest.Layers[0].MediaType != mediaLayer {
			t.Fatalf("manifest %s: %+v", d.Digest, manifest)
		}
		img := openedImage{manifestDigest: d.Digest}
		strict(t, "config", blob(manifest.Config), &img.config)
		if img.config.OS != d.Platform.OS || img.config.Architecture != d.Platform.Architecture {
			t.Errorf("the index says %s/%s, the config of %s says %s/%s", d.Platform.OS, d.Platform.Architecture, d.Digest, img.config.OS, img.config.Architecture)
		}
		zr, err := gzip.NewReader(bytes.NewReader(blob(manifest.Layers[0])))
		if err != nil {
			t.Fatal(err)
		}
		if img.layerTar, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
		a.images[d.Platform.OS+"/"+d.Platform.Architecture] = img
	}
	return a
}

func strict(t *testing.T, what string, b []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, b)
	}
}

type layerFile struct {
	hdr  *tar.Header
	data []byte
}

func layerFiles(t *testing.T, layer []byte) []layerFile {
	t.Helper()
	var files []layerFile
	tr := tar.NewReader(bytes.NewReader(layer))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, layerFile{hdr, b})
	}
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}
