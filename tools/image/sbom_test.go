package main

import (
	"debug/buildinfo"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// cdxDocument is the part of a CycloneDX JSON document the SBOM must get
// right, decoded without the library that wrote it.
type cdxDocument struct {
	BOMFormat   string `json:"bomFormat"`
	SpecVersion string `json:"specVersion"`
	Metadata    struct {
		Timestamp string       `json:"timestamp"`
		Component cdxComponent `json:"component"`
	} `json:"metadata"`
	Components   []cdxComponent `json:"components"`
	Dependencies []struct {
		Ref       string   `json:"ref"`
		DependsOn []string `json:"dependsOn"`
	} `json:"dependencies"`
}

type cdxComponent struct {
	BOMRef     string `json:"bom-ref"`
	Type       string `json:"type"`
	Name       string `json:"name"`
	Version    string `json:"version"`
	PURL       string `json:"purl"`
	Properties []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"properties"`
}

func (c cdxComponent) property(name string) string {
	for _, p := range c.Properties {
		if p.Name == name {
			return p.Value
		}
	}
	return ""
}

// checkSBOM: the SBOM make image wrote beside archive names the image by its
// index digest, one application a platform by its manifest digest, and for
// each exactly the Go modules and the Go version the binary make built for
// that platform records in its build info.
func checkSBOM(t *testing.T, raw []byte, a openedArchive, dir string, created time.Time) {
	t.Helper()
	var doc cdxDocument
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("SBOM: %v", err)
	}
	if doc.BOMFormat != "CycloneDX" || doc.SpecVersion != "1.6" || doc.Metadata.Timestamp != created.Format(time.RFC3339) {
		t.Errorf("SBOM: format %q %q, timestamp %q, want CycloneDX 1.6 at %s", doc.BOMFormat, doc.SpecVersion, doc.Metadata.Timestamp, created.Format(time.RFC3339))
	}
	repository, version := chartImageRepository(t), chartAppVersion(t)
	image := doc.Metadata.Component
	wantPURL := "pkg:oci/stackdome@sha256%3A" + strings.TrimPrefix(a.indexDigest, "sha256:") +
		"?repository_url=" + repository + "&tag=" + version
	if image.Type != "container" || image.Name != repository || image.Version != version || image.PURL != wantPURL {
		t.Errorf("SBOM names the image %+v, want a container %s %s, purl %s", image, repository, version, wantPURL)
	}

	components := map[string]cdxComponent{}
	for _, c := range doc.Components {
		components[c.BOMRef] = c
	}
	dependsOn := map[string][]string{}
	for _, d := range doc.Dependencies {
		dependsOn[d.Ref] = d.DependsOn
		for _, ref := range d.DependsOn {
			if _, ok := components[ref]; !ok {
				t.Errorf("SBOM: %s depends on %s, which it does not list", d.Ref, ref)
			}
		}
	}
	var binaries []string
	for _, p := range platforms {
		ref := "stackdome-linux-" + p.arch
		binaries = append(binaries, ref)
		c, ok := components[ref]
		if !ok {
			t.Errorf("SBOM lists no %s", ref)
			continue
		}
		if c.Type != "application" || c.property("oci:manifest") != a.images[p.name].manifestDigest || c.property("go:build:GOARCH") != p.arch {
			t.Errorf("SBOM: %s is %+v, want the application in manifest %s", ref, c, a.images[p.name].manifestDigest)
		}
		info, err := buildinfo.ReadFile(filepath.Join(dir, "linux-"+p.arch, "stackdome"))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"pkg:golang/stdlib@" + strings.TrimPrefix(info.GoVersion, "go")}
		for _, m := range info.Deps {
			if m.Replace != nil {
				m = m.Replace
			}
			want = append(want, "pkg:golang/"+m.Path+"@"+m.Version)
		}
		slices.Sort(want)
		if diff := cmp.Diff(want, dependsOn[ref]); diff != "" {
			t.Errorf("SBOM: what %s depends on is not what its build info records (-want +got):\n%s", ref, diff)
		}
		if !slices.ContainsFunc(want, func(purl string) bool { return strings.HasPrefix(purl, "pkg:golang/github.com/go-chi/chi/v5@") }) {
			t.Errorf("the build info of %s lists no go-chi/chi: not stackdome's binary?", ref)
		}
	}
	if diff := cmp.Diff(binaries, dependsOn["image"]); diff != "" {
		t.Errorf("SBOM: what the image holds (-want +got):\n%s", diff)
	}
}
