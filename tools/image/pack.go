package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// packSpec is one image pack writes: a single-platform image of one layer,
// named in its archive's index as Name (repository:tag). It is the JSON
// contract between pack and its caller, the e2e suite's BuildImages
// (e2e/framework/images_build.go), which lays out third-party images (the
// binary at the path the real image has it, its user and entrypoint)
// without a container engine.
type packSpec struct {
	// Out is the OCI image layout tarball to write.
	Out string `json:"out"`
	// Name is repository:tag, the io.containerd.image.name containerd's
	// importer names the image after.
	Name string `json:"name"`
	// Architecture is the GOARCH of the binaries (linux only).
	Architecture string `json:"architecture"`
	// Config is the image config's runtime part: User, Entrypoint, Cmd,
	// Env, WorkingDir, ExposedPorts, Labels.
	Config v1.Config `json:"config"`
	// Files are the layer's entries; parent directories are added
	// (root-owned, 0755) where Files does not list them.
	Files []packFile `json:"files"`
	// CreatedBy is the history entry of the one layer: where it comes from.
	CreatedBy string `json:"createdBy"`
}

// packFile is one entry of the layer: a regular file whose bytes are
// Source's (a path on this machine) or Content, or a directory when Path
// ends in "/".
type packFile struct {
	Path    string `json:"path"` // absolute, in the image
	Source  string `json:"source,omitempty"`
	Content string `json:"content,omitempty"`
	Mode    int64  `json:"mode"` // permission bits, plus 01000 for sticky
	UID     int    `json:"uid"`
	GID     int    `json:"gid"`
	// Xattrs are extended attributes as raw values, such as
	// security.capability for a file capability (the way CoreDNS's image
	// lets a non-root process bind port 53).
	Xattrs map[string][]byte `json:"xattrs,omitempty"`
}

// packEpoch stamps every time in a packed image: its inputs alone decide
// its bytes, so one set of binaries gives one digest.
var packEpoch = time.Unix(0, 0).UTC()

func runPack(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("image pack", flag.ContinueOnError)
	fs.SetOutput(stderr)
	specFile := fs.String("spec", "", "a JSON array of images to write (see packSpec)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if *specFile == "" {
		return errors.New("-spec is required")
	}
	raw, err := os.ReadFile(*specFile)
	if err != nil {
		return err
	}
	var specs []packSpec
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&specs); err != nil {
		return fmt.Errorf("decoding %s: %w", *specFile, err)
	}
	for _, s := range specs {
		digest, err := pack(s)
		if err != nil {
			return fmt.Errorf("packing %s: %w", s.Name, err)
		}
		if _, err := fmt.Fprintf(stdout, "%s %s\n", s.Name, digest); err != nil {
			return err
		}
	}
	return nil
}

// pack writes spec's image to spec.Out and returns its index's digest.
func pack(spec packSpec) (v1.Hash, error) {
	repo, tag, ok := splitName(spec.Name)
	if !ok {
		return v1.Hash{}, fmt.Errorf("name %q: want repository:tag", spec.Name)
	}
	if spec.Out == "" || spec.Architecture == "" {
		return v1.Hash{}, errors.New("out and architecture are required")
	}
	layerTar, err := packLayer(spec.Files)
	if err != nil {
		return v1.Hash{}, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return v1.Hash{}, fmt.Errorf("layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History:   v1.History{Created: v1.Time{Time: packEpoch}, CreatedBy: spec.CreatedBy},
	})
	if err != nil {
		return v1.Hash{}, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return v1.Hash{}, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", spec.Architecture
	cf.Created = v1.Time{Time: packEpoch}
	cf.Config = spec.Config
	if img, err = mutate.ConfigFile(img, cf); err != nil {
		return v1.Hash{}, err
	}
	platform := v1.Platform{OS: "linux", Architecture: spec.Architecture}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &platform}})
	if err := writeArchive(spec.Out, idx, repo, tag, packEpoch); err != nil {
		return v1.Hash{}, err
	}
	return idx.Digest()
}

// splitName splits repository:tag at the tag's colon (not a registry
// port's).
func splitName(name string) (repo, tag string, ok bool) {
	i := strings.LastIndex(name, ":")
	if i <= 0 || strings.Contains(name[i+1:], "/") || i == len(name)-1 {
		return "", "", false
	}
	return name[:i], name[i+1:], true
}

// packLayer writes files, and the parent directories they lack, as one
// uncompressed tar in path order, every entry stamped packEpoch. Paths
// must be absolute and clean.
func packLayer(files []packFile) ([]byte, error) {
	entries := map[string]packFile{}
	for _, f := range files {
		name := strings.TrimPrefix(f.Path, "/")
		dir := strings.HasSuffix(name, "/")
		if !strings.HasPrefix(f.Path, "/") || name == "" || path.Clean("/"+name) != "/"+strings.TrimSuffix(name, "/") {
			return nil, fmt.Errorf("path %q: want an absolute, clean path", f.Path)
		}
		if _, dup := entries[name]; dup {
			return nil, fmt.Errorf("path %q listed twice", f.Path)
		}
		if !dir && (f.Source == "") == (f.Content == "") {
			return nil, fmt.Errorf("file %s: want exactly one of source and content", f.Path)
		}
		entries[name] = f
		for p := path.Dir(strings.TrimSuffix(name, "/")); p != "."; p = path.Dir(p) {
			if _, ok := entries[p+"/"]; !ok {
				entries[p+"/"] = packFile{Path: "/" + p + "/", Mode: 0o755}
			}
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for n := range entries {
			if !yield(n) {
				return
			}
		}
	})
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range names {
		f := entries[n]
		hdr := &tar.Header{
			Name: n, Mode: f.Mode, Uid: f.UID, Gid: f.GID, ModTime: packEpoch,
			Format: tar.FormatPAX,
		}
		if len(f.Xattrs) > 0 {
			hdr.PAXRecords = map[string]string{}
			for k, v := range f.Xattrs {
				hdr.PAXRecords["SCHILY.xattr."+k] = string(v)
			}
		}
		var body []byte
		if strings.HasSuffix(n, "/") {
			hdr.Typeflag = tar.TypeDir
		} else {
			hdr.Typeflag = tar.TypeReg
			body = []byte(f.Content)
			if f.Source != "" {
				var err error
				if body, err = os.ReadFile(f.Source); err != nil {
					return nil, err
				}
			}
			hdr.Size = int64(len(body))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(body); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
