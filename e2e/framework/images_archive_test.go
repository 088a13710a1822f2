//go:build e2e

package framework

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

// Reading an image archive with the standard library only, as containerd's
// importer reads it (index.json → image index → per platform manifest →
// config and layers), checking every blob against its digest: the check
// shares no code with tools/image, which wrote it.

type ociDescriptor struct {
	MediaType   string                             `json:"mediaType"`
	Digest      string                             `json:"digest"`
	Size        int64                              `json:"size"`
	Platform    *struct{ OS, Architecture string } `json:"platform,omitempty"`
	Annotations map[string]string                  `json:"annotations,omitempty"`
}

type ociImageConfig struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Config       struct {
		User         string
		Entrypoint   []string
		Cmd          []string
		WorkingDir   string
		Env          []string
		ExposedPorts map[string]struct{}
	} `json:"config"`
}

// layerEntry is one file of an image's layer.
type layerEntry struct {
	hdr  *tar.Header
	data []byte
}

type readImage struct {
	config ociImageConfig
	files  map[string]layerEntry // by absolute path in the image
}

type readArchive struct {
	name, indexDigest string
	images            map[string]readImage // by os/arch
}

func openImageArchive(t *testing.T, path string) readArchive {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	blobs := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		blobs[hdr.Name] = b
	}
	if string(blobs["oci-layout"]) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Fatalf("%s: oci-layout %q", path, blobs["oci-layout"])
	}
	blob := func(d ociDescriptor) []byte {
		t.Helper()
		b, ok := blobs["blobs/"+strings.Replace(d.Digest, ":", "/", 1)]
		sum := sha256.Sum256(b)
		if !ok || "sha256:"+hex.EncodeToString(sum[:]) != d.Digest || int64(len(b)) != d.Size {
			t.Fatalf("%s: blob %s missing or not what its descriptor says", path, d.Digest)
		}
		return b
	}
	var top struct{ Manifests []ociDescriptor }
	decode(t, blobs["index.json"], &top)
	if len(top.Manifests) != 1 || top.Manifests[0].MediaType != "application/vnd.oci.image.index.v1+json" {
		t.Fatalf("%s: index.json names %+v, want one image index", path, top.Manifests)
	}
	a := readArchive{name: top.Manifests[0].Annotations["io.containerd.image.name"], indexDigest: top.Manifests[0].Digest,
		images: map[string]readImage{}}
	var idx struct{ Manifests []ociDescriptor }
	decode(t, blob(top.Manifests[0]), &idx)
	for _, d := range idx.Manifests {
		var m struct {
			Config ociDescriptor
			Layers []ociDescriptor
		}
		decode(t, blob(d), &m)
		img := readImage{files: map[string]layerEntry{}}
		decode(t, blob(m.Config), &img.config)
		if d.Platform == nil || d.Platform.OS != img.config.OS || d.Platform.Architecture != img.config.Architecture {
			t.Errorf("%s: index says platform %+v, config says %s/%s", path, d.Platform, img.config.OS, img.config.Architecture)
		}
		for _, l := range m.Layers {
			zr, err := gzip.NewReader(bytes.NewReader(blob(l)))
			if err != nil {
				t.Fatal(err)
			}
			lr := tar.NewReader(zr)
			for {
				hdr, err := lr.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(lr)
				if err != nil {
					t.Fatal(err)
				}
				img.files["/"+strings.TrimSuffix(hdr.Name, "/")] = layerEntry{hdr, b}
			}
		}
		a.images[img.config.OS+"/"+img.config.Architecture] = img
	}
	return a
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
}

// staticELF reports whether b is an ELF executable for machine with no
// program interpreter: one that runs on an image with no libc.
func staticELF(b []byte, machine elf.Machine) error {
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return err
	}
	if f.Machine != machine {
		return errors.New("built for " + f.Machine.String())
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New("dynamically linked: it needs a loader the image lacks")
		}
	}
	return nil
}
