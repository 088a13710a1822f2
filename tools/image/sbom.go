package main

import (
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	cdx "github.com/CycloneDX/cyclonedx-go"
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// sbomSpecVersion is CycloneDX 1.6, which scanners (Trivy, Grype,
// Dependency-Track) read today; 1.7 is the library's newest.
const sbomSpecVersion = cdx.SpecVersion1_6

// sbom returns the CycloneDX bill of materials of the image index: the image
// (named by repository, tag and index digest), one application a platform
// (the binary, with its manifest digest and Go build settings), and every
// Go module and the Go standard library linked into them, as each binary's
// own build info (debug/buildinfo) records them. Nothing is read from the
// clock, the machine or the network: two builds of one commit give equal
// bytes.
func sbom(b built, spec imageSpec) (*cdx.BOM, error) {
	indexDigest, err := b.index.Digest()
	if err != nil {
		return nil, err
	}
	const imageRef = "image"
	bom := cdx.NewBOM()
	bom.Metadata = &cdx.Metadata{
		Timestamp: spec.created.Format("2006-01-02T15:04:05Z07:00"),
		Tools: &cdx.ToolsChoice{Components: &[]cdx.Component{{
			Type: cdx.ComponentTypeApplication,
			Name: "github.com/stackdome/stackdome/tools/image",
		}}},
		Component: &cdx.Component{
			BOMRef:     imageRef,
			Type:       cdx.ComponentTypeContainer,
			Name:       spec.repository,
			Version:    spec.version,
			PackageURL: ociPURL(spec.repository, spec.version, indexDigest),
			Properties: &[]cdx.Property{
				{Name: "org.opencontainers.image.revision", Value: spec.revision},
				{Name: "org.opencontainers.image.source", Value: spec.source},
			},
		},
	}

	var binaries []cdx.Component
	libraries := map[string]cdx.Component{} // by bom-ref
	deps := []cdx.Dependency{}
	var binaryRefs []string
	for _, p := range b.platforms {
		ref := "stackdome-" + p.platform.OS + "-" + p.platform.Architecture
		binaryRefs = append(binaryRefs, ref)
		props := []cdx.Property{
			{Name: "oci:manifest", Value: p.manifest.String()},
			{Name: "oci:platform", Value: p.platform.String()},
		}
		for _, s := range p.info.Settings {
			props = append(props, cdx.Property{Name: "go:build:" + s.Key, Value: s.Value})
		}
		binaries = append(binaries, cdx.Component{
			BOMRef:     ref,
			Type:       cdx.ComponentTypeApplication,
			Name:       p.info.Main.Path,
			Version:    spec.version,
			PackageURL: "pkg:golang/" + p.info.Main.Path + "?goarch=" + p.platform.Architecture + "&goos=" + p.platform.OS,
			Properties: &props,
		})

		// The standard library as Syft names it, which is what scanners
		// match Go's own vulnerabilities against.
		goVersion := p.info.GoVersion
		stdlib := cdx.Component{
			Type:       cdx.ComponentTypeLibrary,
			Name:       "stdlib",
			Version:    goVersion,
			PackageURL: "pkg:golang/stdlib@" + strings.TrimPrefix(goVersion, "go"),
		}
		stdlib.BOMRef = stdlib.PackageURL
		libraries[stdlib.BOMRef] = stdlib
		uses := []string{stdlib.BOMRef}
		for _, m := range p.info.Deps {
			if m.Replace != nil {
				m = m.Replace
			}
			lib := cdx.Component{
				Type:       cdx.ComponentTypeLibrary,
				Name:       m.Path,
				Version:    m.Version,
				PackageURL: "pkg:golang/" + m.Path + "@" + m.Version,
			}
			if m.Sum != "" {
				lib.Properties = &[]cdx.Property{{Name: "go:module:sum", Value: m.Sum}}
			}
			lib.BOMRef = lib.PackageURL
			libraries[lib.BOMRef] = lib
			uses = append(uses, lib.BOMRef)
		}
		slices.Sort(uses)
		deps = append(deps, cdx.Dependency{Ref: ref, Dependencies: &uses})
	}
	deps = append([]cdx.Dependency{{Ref: imageRef, Dependencies: &binaryRefs}}, deps...)

	components := binaries
	for _, ref := range slices.Sorted(maps.Keys(libraries)) {
		components = append(components, libraries[ref])
	}
	bom.Components = &components
	bom.Dependencies = &deps
	return bom, nil
}

// ociPURL is the image's package URL, as the purl spec's oci type writes
// one: pkg:oci/<last path element>@sha256%3A<hex>?repository_url=<repository>&tag=<tag>.
func ociPURL(repository, tag string, digest v1.Hash) string {
	name := strings.ToLower(repository[strings.LastIndex(repository, "/")+1:])
	return "pkg:oci/" + name + "@" + digest.Algorithm + "%3A" + digest.Hex +
		"?repository_url=" + repository + "&tag=" + url.QueryEscape(tag)
}

// writeSBOM writes bom as indented JSON to out, which appears only once
// complete.
func writeSBOM(out string, bom *cdx.BOM) error {
	tmp, err := os.CreateTemp(filepath.Dir(out), ".sbom-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := encodeSBOM(tmp, bom); err != nil {
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

func encodeSBOM(w io.Writer, bom *cdx.BOM) error {
	return cdx.NewBOMEncoder(w, cdx.BOMFileFormatJSON).SetPretty(true).SetEscapeHTML(false).EncodeVersion(bom, sbomSpecVersion)
}
