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
	"slices"
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

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Size        int64             `json:"size"`
	Digest      string            `json:"digest"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type openedImage struct {
	manifestDigest string
	refs           map[string]string
	config         ociConfig
	layerTar       []byte // uncompressed
}

// openArchive reads an OCI image layout tarball the way a runtime would:
// oci-layout → index.json → manifest → config and layers, checking every
// blob against its digest and size, and Docker's manifest.json against the
// same blobs.
func openArchive(t *testing.T, archive []byte) openedImage {
	t.Helper()
	entries := map[string][]byte{}
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
	}
	if got := string(entries["oci-layout"]); got != `{"imageLayoutVersion":"1.0.0"}` {
		t.Fatalf("oci-layout = %q", got)
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
	strict := func(what string, b []byte, v any) {
		t.Helper()
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, b)
		}
	}

	var index struct {
		SchemaVersion int          `json:"schemaVersion"`
		MediaType     string       `json:"mediaType"`
		Manifests     []descriptor `json:"manifests"`
	}
	strict("index.json", entries["index.json"], &index)
	if index.SchemaVersion != 2 || index.MediaType != "application/vnd.oci.image.index.v1+json" || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %+v", index)
	}
	if index.Manifests[0].MediaType != "application/vnd.oci.image.manifest.v1+json" {
		t.Fatalf("index.json names a %s", index.Manifests[0].MediaType)
	}
	var manifest struct {
		SchemaVersion int          `json:"schemaVersion"`
		MediaType     string       `json:"mediaType"`
		Config        descriptor   `json:"config"`
		Layers        []descriptor `json:"layers"`
	}
	strict("manifest", blob(index.Manifests[0]), &manifest)
	if manifest.Config.MediaType != "application/vnd.oci.image.config.v1+json" || len(manifest.Layers) != 1 ||
		manifest.Layers[0].MediaType != "application/vnd.oci.image.layer.v1.tar+gzip" {
		t.Fatalf("manifest: %+v", manifest)
	}
	img := openedImage{manifestDigest: index.Manifests[0].Digest, refs: index.Manifests[0].Annotations}
	strict("config", blob(manifest.Config), &img.config)
	zr, err := gzip.NewReader(bytes.NewReader(blob(manifest.Layers[0])))
	if err != nil {
		t.Fatal(err)
	}
	if img.layerTar, err = io.ReadAll(zr); err != nil {
		t.Fatal(err)
	}

	var docker []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	strict("manifest.json", entries["manifest.json"], &docker)
	wantDocker := []string{"blobs/" + strings.Replace(manifest.Config.Digest, ":", "/", 1), "blobs/" + strings.Replace(manifest.Layers[0].Digest, ":", "/", 1)}
	if len(docker) != 1 || !slices.Equal([]string{docker[0].Config, strings.Join(docker[0].Layers, ",")}, wantDocker) {
		t.Errorf("manifest.json %+v does not name the OCI manifest's blobs %q", docker, wantDocker)
	}
	return img
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
