package main

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Annotations naming the image in the archive's index.json.
const (
	// refNameAnnotation holds the tag, as skopeo's and podman's oci-archive
	// transport expect.
	refNameAnnotation = "org.opencontainers.image.ref.name"
	// containerdNameAnnotation holds repository:tag. containerd's importer
	// (`ctr images import`, which `kind load image-archive` runs on each
	// node) names the image it stores after it: an image the kubelet then
	// finds under the name the chart gives.
	containerdNameAnnotation = "io.containerd.image.name"
)

// writeArchive writes idx, with every manifest, config and layer it refers
// to, as an OCI image layout in a tar archive: what `make image-push` reads,
// what `kind load image-archive` (containerd) imports with all its
// platforms, what `skopeo copy --all oci-archive:` copies. index.json holds
// one descriptor, the image index, named by tag and by repository:tag.
//
// There is no Docker manifest.json: it describes one image a tag, and a
// multi-platform archive has two.
//
// Entries are sorted and stamped with mtime, so equal indexes give equal
// bytes. The file appears at out only once complete.
func writeArchive(out string, idx v1.ImageIndex, repository, tag string, mtime time.Time) error {
	files := map[string][]byte{
		"oci-layout":    []byte(`{"imageLayoutVersion":"1.0.0"}`),
		"blobs/":        nil,
		"blobs/sha256/": nil,
	}
	if err := addIndexBlobs(files, idx); err != nil {
		return err
	}
	desc, err := descriptorOf(idx)
	if err != nil {
		return err
	}
	desc.Annotations = map[string]string{
		refNameAnnotation:        tag,
		containerdNameAnnotation: repository + ":" + tag,
	}
	top := v1.IndexManifest{
		SchemaVersion: 2,
		MediaType:     types.OCIImageIndex,
		Manifests:     []v1.Descriptor{desc},
	}
	if files["index.json"], err = json.Marshal(top); err != nil {
		return err
	}

	tmp, err := os.CreateTemp(filepath.Dir(out), ".image-*.tar")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := writeTar(tmp, files, mtime); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}

func descriptorOf(idx v1.ImageIndex) (v1.Descriptor, error) {
	raw, err := idx.RawManifest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	digest, err := idx.Digest()
	if err != nil {
		return v1.Descriptor{}, err
	}
	mt, err := idx.MediaType()
	if err != nil {
		return v1.Descriptor{}, err
	}
	return v1.Descriptor{MediaType: mt, Size: int64(len(raw)), Digest: digest}, nil
}

// addIndexBlobs adds idx's manifest and, for each image it lists, the
// image's manifest, config and compressed layers.
func addIndexBlobs(files map[string][]byte, idx v1.ImageIndex) error {
	raw, err := idx.RawManifest()
	if err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	files[blob(digest)] = raw
	im, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	for _, d := range im.Manifests {
		if !d.MediaType.IsImage() {
			return fmt.Errorf("index lists a %s, want only images", d.MediaType)
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			return err
		}
		if err := addImageBlobs(files, img); err != nil {
			return err
		}
	}
	return nil
}

func addImageBlobs(files map[string][]byte, img v1.Image) error {
	manifest, err := img.RawManifest()
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	config, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	configName, err := img.ConfigName()
	if err != nil {
		return err
	}
	files[blob(digest)] = manifest
	files[blob(configName)] = config
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			return err
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		files[blob(d)] = b
	}
	return nil
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

// readArchive unpacks an archive writeArchive wrote into dir and returns the
// image index its index.json names. Every blob is checked against the digest
// its name says as it is unpacked; names that would leave dir, links, and
// anything but one image index in index.json are refused.
func readArchive(archive, dir string) (v1.ImageIndex, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", archive, err)
		}
		if !filepath.IsLocal(hdr.Name) {
			return nil, fmt.Errorf("%s: entry %q leaves the archive", archive, hdr.Name)
		}
		path := filepath.Join(dir, hdr.Name)
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			err = writeFile(path, hdr.Name, tr)
		default:
			err = fmt.Errorf("entry %q: type %c, want a file or a directory", hdr.Name, hdr.Typeflag)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", archive, err)
		}
	}

	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", archive, err)
	}
	im, err := top.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(im.Manifests) != 1 || !im.Manifests[0].MediaType.IsIndex() {
		return nil, fmt.Errorf("%s: index.json must name one image index (make image writes it so)", archive)
	}
	return top.ImageIndex(im.Manifests[0].Digest)
}

// writeFile writes the archive entry name to path; an entry under
// blobs/sha256/ must hash to its name.
func writeFile(path, name string, r io.Reader) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(f, h), r); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if want, ok := strings.CutPrefix(name, "blobs/sha256/"); ok {
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			return fmt.Errorf("blob %s holds content hashing to sha256:%s", name, got)
		}
	}
	return nil
}
