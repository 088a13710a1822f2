package main

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// writeArchive writes img as an OCI image layout in a tar archive (what
// `skopeo copy oci-archive:` and `podman load` read), with Docker's
// manifest.json beside it (what `docker load` and `crane push` read), and
// returns the manifest digest. The index names the image by tag
// (org.opencontainers.image.ref.name, as skopeo and podman expect) and by
// repository:tag (io.containerd.image.name, as containerd and Docker do). Entries are sorted and stamped with the
// image's creation time, so equal images give equal bytes. The file appears
// at out only once complete.
func writeArchive(out string, img v1.Image, repository, tag string) (string, error) {
	manifest, err := img.RawManifest()
	if err != nil {
		return "", err
	}
	digest, err := img.Digest()
	if err != nil {
		return "", err
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return "", err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return "", err
	}
	configName, err := img.ConfigName()
	if err != nil {
		return "", err
	}
	// Names ending in / are directories; index.json and manifest.json are
	// filled in below, once every blob is known.
	files := map[string][]byte{
		"oci-layout":     []byte(`{"imageLayoutVersion":"1.0.0"}`),
		"blobs/":         nil,
		"blobs/sha256/":  nil,
		blob(digest):     manifest,
		blob(configName): config,
	}
	layers, err := img.Layers()
	if err != nil {
		return "", err
	}
	var layerNames []string
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return "", err
		}
		rc, err := l.Compressed()
		if err != nil {
			return "", err
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return "", err
		}
		files[blob(d)] = b
		layerNames = append(layerNames, blob(d))
	}

	index := v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests: []v1.Descriptor{{
			MediaType: types.OCIManifestSchema1,
			Size:      int64(len(manifest)),
			Digest:    digest,
			Annotations: map[string]string{
				"org.opencontainers.image.ref.name": tag,
				"io.containerd.image.name":          repository + ":" + tag,
			},
		}},
	}
	if files["index.json"], err = json.Marshal(index); err != nil {
		return "", err
	}
	docker := []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}{{Config: blob(configName), RepoTags: []string{repository + ":" + tag}, Layers: layerNames}}
	if files["manifest.json"], err = json.Marshal(docker); err != nil {
		return "", err
	}

	tmp, err := os.CreateTemp(filepath.Dir(out), ".image-*.tar")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if err := writeTar(tmp, files, cf.Created.Time); err != nil {
		tmp.Close()
		return "", fmt.Errorf("writing %s: %w", out, err)
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return "", err
	}
	return digest.String(), nil
}

func blob(h v1.Hash) string { return "blobs/" + h.Algorithm + "/" + h.Hex }

// writeTar writes files in name order; a name ending in / is a directory.
func writeTar(w io.Writer, files map[string][]byte, mtime time.Time) error {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	tw := tar.NewWriter(w)
	for _, n := range names {
		hdr := &tar.Header{Name: n, ModTime: mtime, Format: tar.FormatUSTAR}
		if n[len(n)-1] == '/' {
			hdr.Typeflag, hdr.Mode = tar.TypeDir, 0o755
		} else {
			hdr.Typeflag, hdr.Mode, hdr.Size = tar.TypeReg, 0o644, int64(len(files[n]))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(files[n]); err != nil {
			return err
		}
	}
	return tw.Close()
}
