package chart

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/stackdome/stackdome/schema"
)

// chartFile is the part of Chart.yaml these tests read.
type chartFile struct {
	KubeVersion string            `json:"kubeVersion"`
	Icon        string            `json:"icon"`
	Annotations map[string]string `json:"annotations"`
}

func readChartFile(t *testing.T) chartFile {
	t.Helper()
	data, err := os.ReadFile("Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	js, err := kyaml.ToJSON(data)
	if err != nil {
		t.Fatalf("Chart.yaml: %v", err)
	}
	var c chartFile // the other fields are Helm's to check (helm lint)
	if err := json.Unmarshal(js, &c); err != nil {
		t.Fatalf("Chart.yaml: %v", err)
	}
	return c
}

// yamlInto decodes YAML strictly into v (through JSON, as Helm and the API
// server read it).
func yamlInto(data []byte, v any) error {
	js, err := kyaml.ToJSON(data)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// annotation decodes one artifacthub.io annotation, a YAML document in a
// string, strictly into v.
func annotation(t *testing.T, c chartFile, key string, v any) {
	t.Helper()
	raw, ok := c.Annotations[key]
	if !ok {
		t.Fatalf("Chart.yaml has no annotation %s", key)
	}
	if err := yamlInto([]byte(raw), v); err != nil {
		t.Fatalf("annotation %s: %v\n%s", key, err, raw)
	}
}

// TestArtifactHubImagesArePulled: the images Artifact Hub lists (and scans)
// are exactly the ones the chart's default values make the Deployment pull.
func TestArtifactHubImagesArePulled(t *testing.T) {
	var images []struct{ Name, Image string }
	annotation(t, readChartFile(t), "artifacthub.io/images", &images)
	var listed []string
	for _, i := range images {
		listed = append(listed, i.Image)
	}
	var pulled []string
	for _, c := range find[*appsv1.Deployment](t, decode(t, render(t, install{})), "Deployment").Spec.Template.Spec.Containers {
		pulled = append(pulled, c.Image)
	}
	if diff := cmp.Diff(pulled, listed); diff != "" {
		t.Errorf("artifacthub.io/images (-pulled by default +listed):\n%s", diff)
	}
}

// TestArtifactHubAnnotations reads every other annotation the way Artifact
// Hub does: changes of the known kinds, https links, the CRD that
// chart/crds ships, and an example that the API server and stackdome's own
// validation accept.
func TestArtifactHubAnnotations(t *testing.T) {
	c := readChartFile(t)
	var changes []struct{ Kind, Description string }
	annotation(t, c, "artifacthub.io/changes", &changes)
	if len(changes) == 0 {
		t.Error("artifacthub.io/changes lists nothing")
	}
	for _, ch := range changes {
		if !slices.Contains([]string{"added", "changed", "deprecated", "removed", "fixed", "security"}, ch.Kind) || ch.Description == "" {
			t.Errorf("change %+v: want a kind Artifact Hub knows and a description", ch)
		}
	}
	// Artifact Hub shows the SPDX identifier; LICENSE is the text it names.
	if got := c.Annotations["artifacthub.io/license"]; got != "Apache-2.0" {
		t.Errorf("artifacthub.io/license %q, want Apache-2.0", got)
	}
	if license, err := os.ReadFile(filepath.Join(repoRoot, "LICENSE")); err != nil || !bytes.Contains(license, []byte("Apache License\n                           Version 2.0, January 2004")) {
		t.Errorf("LICENSE at the root is not the Apache License 2.0 (%v)", err)
	}
	var links []struct{ Name, URL string }
	annotation(t, c, "artifacthub.io/links", &links)
	for _, l := range links {
		if l.Name == "" || !strings.HasPrefix(l.URL, "https://") {
			t.Errorf("link %+v: want a name and an https URL", l)
		}
	}

	var crds []struct{ Kind, Version, Name, DisplayName, Description string }
	annotation(t, c, "artifacthub.io/crds", &crds)
	crd := find[*customResourceDefinition](t, decode(t, render(t, install{})), "CustomResourceDefinition")
	var got []string
	for _, d := range crds {
		got = append(got, d.Kind+" "+d.Version+" "+d.Name)
	}
	var want []string
	for _, v := range crd.Spec.Versions {
		want = append(want, crd.Spec.Names.Kind+" "+v.Name+" "+crd.Metadata.Name)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("artifacthub.io/crds (-chart/crds +annotation):\n%s", diff)
	}

	var examples []json.RawMessage
	annotation(t, c, "artifacthub.io/crdsExamples", &examples)
	if len(examples) == 0 {
		t.Fatal("artifacthub.io/crdsExamples lists nothing")
	}
	for i, ex := range examples {
		var sr schema.StackResource
		dec := json.NewDecoder(bytes.NewReader(ex))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&sr); err != nil {
			t.Errorf("example %d: %v", i, err)
			continue
		}
		if sr.APIVersion != "stackdome.io/v1alpha1" || sr.Kind != "StackResource" {
			t.Errorf("example %d is a %s %s", i, sr.APIVersion, sr.Kind)
		}
		if err := schema.Validate(schema.Default(sr.Spec)); err != nil {
			t.Errorf("example %d is refused: %v", i, err)
		}
	}
}

// TestKubeVersion: Chart.yaml's kubeVersion is the minimum docs/install.md
// states, and Helm refuses a cluster below it — including a vendor build
// of the minimum, which "-0" lets through.
func TestKubeVersion(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\*\*Kubernetes ≥ (1\.[0-9]+)\*\*`).FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/install.md states no minimum Kubernetes (**Kubernetes ≥ 1.N**)")
	}
	minor := string(m[1])
	if got, want := readChartFile(t).KubeVersion, ">="+minor+".0-0"; got != want {
		t.Fatalf("Chart.yaml kubeVersion %q, docs/install.md says Kubernetes ≥ %s (want %q)", got, minor, want)
	}
	n, err := strconv.Atoi(strings.TrimPrefix(minor, "1."))
	if err != nil {
		t.Fatal(err)
	}
	below := "1." + strconv.Itoa(n-1)
	tests := map[string]struct {
		kubeVersion string
		wantErr     bool
	}{
		"the minimum":               {kubeVersion: "v" + minor + ".0"},
		"a vendor build of it":      {kubeVersion: "v" + minor + ".4-eks-1234abc"},
		"the test control plane's":  {kubeVersion: clusterKubeVersion},
		"one minor below":           {kubeVersion: "v" + below + ".9", wantErr: true},
		"a vendor build from below": {kubeVersion: "v" + below + ".9-gke.100", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := runHelm(t, install{kubeVersion: tc.kubeVersion}.args("template")...)
			switch {
			case tc.wantErr && (err == nil || !strings.Contains(err.Error(), "chart requires kubeVersion")):
				t.Fatalf("want Helm to refuse Kubernetes %s, got %v", tc.kubeVersion, err)
			case !tc.wantErr && err != nil:
				t.Fatal(err)
			}
		})
	}
}

// TestIconIsTheBrandMark: the icon is an inline SVG (a data URI: nothing to
// fetch) drawing the same mark as the error pages, and refers to nothing
// outside itself.
func TestIconIsTheBrandMark(t *testing.T) {
	icon := readChartFile(t).Icon
	b64, ok := strings.CutPrefix(icon, "data:image/svg+xml;base64,")
	if !ok {
		t.Fatalf("icon %.40q… is not a base64 SVG data URI", icon)
	}
	svg, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	var mark struct {
		XMLName xml.Name
		ViewBox string `xml:"viewBox,attr"`
		Paths   []struct {
			D string `xml:"d,attr"`
		} `xml:"path"`
	}
	if err := xml.Unmarshal(svg, &mark); err != nil || mark.XMLName.Local != "svg" || len(mark.Paths) != 1 {
		t.Fatalf("icon is not an SVG of one path (%v):\n%s", err, svg)
	}
	if bytes.Contains(bytes.ReplaceAll(svg, []byte("xmlns='http://www.w3.org/2000/svg'"), nil), []byte("http")) || bytes.Contains(svg, []byte("href")) {
		t.Errorf("icon refers to something outside itself:\n%s", svg)
	}
	layout, err := os.ReadFile(filepath.Join(repoRoot, "errorpages", "pages", "layout.html"))
	if err != nil {
		t.Fatal(err)
	}
	brand := regexp.MustCompile(`<div class="brand">(?:{{if .Brand.Logo}}<img [^>]*>{{else}})?<svg viewBox="([^"]+)"[^>]*><path d="([^"]+)"`).FindSubmatch(layout)
	if brand == nil {
		t.Fatal("no brand mark in errorpages/pages/layout.html")
	}
	if got, want := mark.ViewBox+" "+mark.Paths[0].D, string(brand[1])+" "+string(brand[2]); got != want {
		t.Errorf("icon draws %q, the pages' mark is %q", got, want)
	}
}
