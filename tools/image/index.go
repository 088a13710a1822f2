package main

import (
	"cmp"
	"debug/buildinfo"
	"fmt"
	"os"
	"slices"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// built is what build makes: the image index, and for each platform in it
// the binary's build info (which the SBOM lists).
type built struct {
	index     v1.ImageIndex
	platforms []platformBuild // in the index's order
}

type platformBuild struct {
	platform v1.Platform
	manifest v1.Hash
	info     *buildinfo.BuildInfo
}

// build returns the multi-platform image of spec's binaries: an OCI image
// index with one image a binary, each descriptor naming its platform, in
// architecture order whatever the order of the binaries, and the OCI labels
// as the index's annotations. Two binaries for one platform are refused.
func build(spec imageSpec) (built, error) {
	if len(spec.binaries) == 0 {
		return built{}, fmt.Errorf("no binaries")
	}
	type entry struct {
		platformBuild
		add mutate.IndexAddendum
	}
	var entries []entry
	from := map[string]string{}
	for _, path := range spec.binaries {
		bin, err := os.ReadFile(path)
		if err != nil {
			return built{}, err
		}
		info, arch, err := staticLinuxBinary(bin)
		if err != nil {
			return built{}, fmt.Errorf("%s: %w", path, err)
		}
		if prev, ok := from[arch]; ok {
			return built{}, fmt.Errorf("%s and %s are both linux/%s", prev, path, arch)
		}
		from[arch] = path
		img, err := platformImage(bin, arch, spec)
		if err != nil {
			return built{}, fmt.Errorf("%s: %w", path, err)
		}
		digest, err := img.Digest()
		if err != nil {
			return built{}, err
		}
		platform := v1.Platform{OS: "linux", Architecture: arch}
		entries = append(entries, entry{
			platformBuild: platformBuild{platform: platform, manifest: digest, info: info},
			add:           mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &platform}},
		})
	}
	slices.SortFunc(entries, func(a, b entry) int {
		return cmp.Compare(a.platform.Architecture, b.platform.Architecture)
	})

	var b built
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, e := range entries {
		idx = mutate.AppendManifests(idx, e.add)
		b.platforms = append(b.platforms, e.platformBuild)
	}
	b.index = mutate.Annotations(idx, spec.labels()).(v1.ImageIndex)
	return b, nil
}
