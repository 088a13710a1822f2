package main

import (
	"archive/tar"
	"bytes"
	"debug/buildinfo"
	"fmt"
	"io"
	"maps"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's fixed shape. The chart's Deployment passes only flags as args
// (chart/templates/deployment.yaml), which follow this entrypoint.
const (
	binaryPath = "stackdome" // in the layer: /stackdome
	user       = "65532:65532"
)

var entrypoint = []string{"/" + binaryPath, "serve"}

// env is the one variable of the image: the PATH Docker's and Buildah's
// builders give an image from scratch (BuildKit's and Buildah's default
// for Linux), so that the Dockerfile's image and this one agree.
var env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}

// imageSpec is everything the image is built from.
type imageSpec struct {
	binaries                              []string // one a platform
	repository, version, revision, source string
	created                               time.Time
}

// fixedLabels are the OCI labels of every stackdome image whatever the
// build: the one list of them. An image built another way (a Dockerfile at
// the repository's root) carries the same keys and values as LABELs, and
// buildLabels' keys from its build arguments; TestDockerfileLabels holds
// the two equal.
var fixedLabels = map[string]string{
	"org.opencontainers.image.licenses": "Apache-2.0", // SPDX; LICENSE at the root
	"org.opencontainers.image.title":    "stackdome",
}

// buildLabels are the OCI labels that follow from the build's inputs: the
// commit time, the commit, where its source is and the version.
func (spec imageSpec) buildLabels() map[string]string {
	return map[string]string{
		"org.opencontainers.image.created":  spec.created.Format(time.RFC3339),
		"org.opencontainers.image.revision": spec.revision,
		"org.opencontainers.image.source":   spec.source,
		"org.opencontainers.image.version":  spec.version,
	}
}

// labels are the OCI annotations every manifest's config carries as labels
// and the index carries as annotations (registries such as GHCR read a
// multi-platform image's description from its index): fixedLabels and
// buildLabels.
func (spec imageSpec) labels() map[string]string {
	l := spec.buildLabels()
	maps.Copy(l, fixedLabels)
	return l
}

// platformImage returns the image of one binary: scratch plus one layer
// holding it, the config naming user, entrypoint, ports and the OCI labels.
// Nothing in it comes from the clock or the machine: timestamps are
// spec.created, the architecture is the binary's own.
func platformImage(bin []byte, arch string, spec imageSpec) (v1.Image, error) {
	layerTar, err := layerTarball(bin, spec.created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer), tarball.WithCompressedCaching)
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}

	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{
		Layer:     layer,
		MediaType: types.OCILayer,
		History: v1.History{
			Created:   v1.Time{Time: spec.created},
			CreatedBy: "tools/image: /stackdome from make image",
		},
	})
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS = "linux"
	cf.Architecture = arch
	cf.Created = v1.Time{Time: spec.created}
	cf.Config = v1.Config{
		User:         user,
		Entrypoint:   entrypoint,
		Env:          env,
		WorkingDir:   "/",
		ExposedPorts: map[string]struct{}{"8080/tcp": {}, "8081/tcp": {}, "8082/tcp": {}},
		Labels:       spec.labels(),
	}
	return mutate.ConfigFile(img, cf)
}

// layerTarball is the one layer: /stackdome, root-owned, 0755, stamped with
// the creation time. No directories, no shell, nothing else.
func layerTarball(bin []byte, created time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     binaryPath,
		Mode:     0o755,
		Size:     int64(len(bin)),
		ModTime:  created,
		Format:   tar.FormatUSTAR,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(bin); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// staticLinuxBinary returns the build info of a Go binary built for Linux
// without cgo and with -trimpath, and its GOARCH; an error for any other: on
// scratch there is no libc to link against, and build paths have no business
// in an image.
func staticLinuxBinary(bin []byte) (*buildinfo.BuildInfo, string, error) {
	info, err := buildinfo.Read(bytes.NewReader(bin))
	if err != nil {
		return nil, "", fmt.Errorf("not a Go binary: %w", err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	switch {
	case settings["GOOS"] != "linux":
		return nil, "", fmt.Errorf("built for GOOS=%q, want linux", settings["GOOS"])
	case settings["CGO_ENABLED"] != "0":
		return nil, "", fmt.Errorf("built with CGO_ENABLED=%q, want 0: scratch has no libc", settings["CGO_ENABLED"])
	case settings["-trimpath"] != "true":
		return nil, "", fmt.Errorf("built without -trimpath")
	case settings["GOARCH"] == "":
		return nil, "", fmt.Errorf("no GOARCH in the build info")
	}
	return info, settings["GOARCH"], nil
}
