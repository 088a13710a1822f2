package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// imageView is what two builds of stackdome's image must agree on,
// whatever built them: the platform, what a runtime runs (user,
// entrypoint, command, environment, working directory, ports) and the
// labels, and the filesystem the layers make. Timestamps, history and
// digests are the builder's own and left out.
type imageView struct {
	OS           string             `json:"os"`
	Architecture string             `json:"architecture"`
	Config       runConfig          `json:"config"`
	Files        map[string]fsEntry `json:"-"`
	Binary       []byte             `json:"-"` // /stackdome's bytes
}

type runConfig struct {
	User         string              `json:"User"`
	Entrypoint   []string            `json:"Entrypoint"`
	Cmd          []string            `json:"Cmd"`
	Env          []string            `json:"Env"`
	WorkingDir   string              `json:"WorkingDir"`
	ExposedPorts map[string]struct{} `json:"ExposedPorts"`
	Labels       map[string]string   `json:"Labels"`
}

// fsEntry is one path of an image's filesystem: its type, permission bits,
// owner and, for a file, the SHA-256 of its content.
type fsEntry struct {
	Type     string
	Mode     int64
	UID, GID int
	Content  string
	Link     string
}

// fileTree applies layers (uncompressed tarballs, base first) the way a
// runtime unpacks them and returns every path but the root, without its
// leading "/" or "./"; the content of /stackdome is returned as well.
// Whiteouts remove what they name.
func fileTree(t *testing.T, layers [][]byte) (map[string]fsEntry, []byte) {
	t.Helper()
	files := map[string]fsEntry{}
	var binary []byte
	for _, layer := range layers {
		tr := tar.NewReader(bytes.NewReader(layer))
		for {
			hdr, err := tr.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			name := strings.TrimPrefix(path.Clean("/"+hdr.Name), "/")
			if name == "" {
				continue
			}
			if dir, base := path.Split(name); strings.HasPrefix(base, ".wh.") {
				gone := path.Join(dir, strings.TrimPrefix(base, ".wh."))
				for p := range files {
					if p == gone || strings.HasPrefix(p, gone+"/") {
						delete(files, p)
					}
				}
				continue
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			e := fsEntry{Type: string(hdr.Typeflag), Mode: hdr.Mode & 0o7777, UID: hdr.Uid, GID: hdr.Gid, Link: hdr.Linkname}
			if hdr.Typeflag == tar.TypeReg {
				e.Content = sha(b)
			}
			if name == binaryPath {
				binary = b
			}
			files[name] = e
		}
	}
	return files, binary
}

// makeImageViews are the images of make image's tarball, by "os/arch".
func makeImageViews(t *testing.T, a openedArchive) map[string]imageView {
	t.Helper()
	views := map[string]imageView{}
	for p, img := range a.images {
		c := img.config.Config
		v := imageView{OS: img.config.OS, Architecture: img.config.Architecture, Config: runConfig{
			User: c.User, Entrypoint: c.Entrypoint, Cmd: c.Cmd, Env: c.Env,
			WorkingDir: c.WorkingDir, ExposedPorts: c.ExposedPorts, Labels: c.Labels,
		}}
		v.Files, v.Binary = fileTree(t, [][]byte{img.layerTar})
		views[p] = v
	}
	return views
}

// layoutViews reads an OCI image layout directory (what `buildah manifest
// push --all … oci:<dir>` writes) and returns its images by "os/arch":
// index.json names an image index, or the images themselves.
func layoutViews(t *testing.T, dir string) map[string]imageView {
	t.Helper()
	blob := func(digest string) []byte {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "blobs", strings.Replace(digest, ":", "/", 1)))
		if err != nil {
			t.Fatal(err)
		}
		if sha(b) != digest {
			t.Fatalf("blob %s hashes to %s", digest, sha(b))
		}
		return b
	}
	type manifests struct {
		MediaType string       `json:"mediaType"`
		Manifests []descriptor `json:"manifests"`
		Config    descriptor   `json:"config"`
		Layers    []descriptor `json:"layers"`
	}
	var top manifests
	b, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	descs := top.Manifests
	if len(descs) == 1 && (descs[0].MediaType == mediaIndex || descs[0].MediaType == "application/vnd.docker.distribution.manifest.list.v2+json") {
		var idx manifests
		if err := json.Unmarshal(blob(descs[0].Digest), &idx); err != nil {
			t.Fatal(err)
		}
		descs = idx.Manifests
	}
	views := map[string]imageView{}
	for _, d := range descs {
		var m manifests
		if err := json.Unmarshal(blob(d.Digest), &m); err != nil {
			t.Fatal(err)
		}
		var v imageView
		if err := json.Unmarshal(blob(m.Config.Digest), &v); err != nil {
			t.Fatal(err)
		}
		var layers [][]byte
		for _, l := range m.Layers {
			raw := blob(l.Digest)
			if strings.HasSuffix(l.MediaType, "gzip") {
				zr, err := gzip.NewReader(bytes.NewReader(raw))
				if err != nil {
					t.Fatal(err)
				}
				if raw, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			layers = append(layers, raw)
		}
		v.Files, v.Binary = fileTree(t, layers)
		p := v.OS + "/" + v.Architecture
		if _, dup := views[p]; dup {
			t.Fatalf("%s holds two images for %s", dir, p)
		}
		views[p] = v
	}
	return views
}
