package chart

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/stackdome/stackdome/errorpages"
)

// TestBrandsReachThePageServer: the brands in values become a ConfigMap
// whose brands.json is exactly what serve --brands-file loads (the same
// brands as errorpages/testdata/brands.json), mounted where the flag says,
// with its digest on the pod template so that a brand change rolls the
// pods; without brands none of it renders.
func TestBrandsReachThePageServer(t *testing.T) {
	objs := decode(t, render(t, install{files: []string{"brands.yaml"}}))
	cm := findNamed[*corev1.ConfigMap](t, objs, "ConfigMap", "stackdome-brands")
	data := cm.Data["brands.json"]
	got, err := errorpages.LoadBrands(strings.NewReader(data))
	if err != nil {
		t.Fatalf("serve would refuse the chart's brand file: %v", err)
	}
	f, err := os.Open(filepath.Join(repoRoot, "errorpages", "testdata", "brands.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want, err := errorpages.LoadBrands(f)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("brands in the ConfigMap (-values +rendered):\n%s", diff)
	}

	// The page server is the error-page Deployment (the hooks run
	// --pages=false and read no brand file).
	dep := findNamed[*appsv1.Deployment](t, objs, "Deployment", "stackdome-error-pages")
	pod := dep.Spec.Template
	hooksPod := findNamed[*appsv1.Deployment](t, objs, "Deployment", "stackdome").Spec.Template
	if _, ok := hooksPod.Annotations["stackdome.io/brands-digest"]; ok || len(hooksPod.Spec.Volumes) != 1 || hooksPod.Spec.Volumes[0].Name != "hooks-tls" || strings.Contains(strings.Join(hooksPod.Spec.Containers[0].Args, " "), "brands") {
		t.Errorf("the hooks' Deployment carries the brands; only the page server reads them")
	}
	sum := sha256.Sum256([]byte(data))
	if got, want := pod.Annotations["stackdome.io/brands-digest"], hex.EncodeToString(sum[:]); got != want {
		t.Errorf("brands digest annotation %q, want sha256 of brands.json %q", got, want)
	}
	c := pod.Spec.Containers[0]
	type wiring struct {
		Arg, MountPath, Volume, ConfigMap string
		ReadOnly                          bool
	}
	var w wiring
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--brands-file="); ok {
			w.Arg = v
		}
	}
	for _, m := range c.VolumeMounts {
		if m.Name == "brands" {
			w.MountPath, w.ReadOnly = m.MountPath, m.ReadOnly
		}
	}
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil && v.Name == "brands" {
			w.Volume, w.ConfigMap = v.Name, v.ConfigMap.Name
		}
	}
	if diff := cmp.Diff(wiring{Arg: "/etc/stackdome/brands/brands.json", MountPath: "/etc/stackdome/brands", ReadOnly: true, Volume: "brands", ConfigMap: cm.Name}, w); diff != "" {
		t.Errorf("brand file wiring (-want +got):\n%s", diff)
	}

	// A brand change rolls the pods: another colour, another digest.
	other := decode(t, render(t, install{files: []string{"brands.yaml"}, set: []string{"errorPages.brands[1].colors.light.accent=#111111"}}))
	if a, b := pod.Annotations["stackdome.io/brands-digest"], findNamed[*appsv1.Deployment](t, other, "Deployment", "stackdome-error-pages").Spec.Template.Annotations["stackdome.io/brands-digest"]; a == b {
		t.Errorf("a brand's colour changed and the digest stayed %s", a)
	}

	// No brands, or no pages: no ConfigMap, no flag, no mount, no annotation.
	for _, in := range []install{{}, {files: []string{"brands.yaml"}, set: []string{"errorPages.enabled=false"}}} {
		objs := decode(t, render(t, in))
		for _, o := range objs {
			if strings.Contains(o.id(), "brands") {
				t.Errorf("%v renders %s", in.set, o.id())
			}
		}
		for _, o := range objs {
			dep, ok := o.typed.(*appsv1.Deployment)
			if !ok {
				continue
			}
			pod := dep.Spec.Template
			// The one volume of the hooks' pods: their TLS Secret.
			if _, ok := pod.Annotations["stackdome.io/brands-digest"]; ok || len(pod.Spec.Volumes) > 1 || (len(pod.Spec.Volumes) == 1 && pod.Spec.Volumes[0].Name != "hooks-tls") || strings.Contains(strings.Join(pod.Spec.Containers[0].Args, " "), "brands") {
				t.Errorf("%v: %s's pod template holds brand wiring: %v %v", in.set, o.id(), pod.Annotations, pod.Spec.Volumes)
			}
		}
	}
}

// TestBrandValuesRejected: the values schema refuses what serve would
// refuse at start-up, naming the field, before anything is installed.
func TestBrandValuesRejected(t *testing.T) {
	base := []string{"errorPages.brands[0].name=acme", "errorPages.brands[0].displayName=Acme"}
	tests := map[string]struct {
		set  []string
		want string
	}{
		"a name with markup":      {set: []string{"errorPages.brands[0].name=acme", "errorPages.brands[0].displayName=<b>Acme</b>"}, want: "at '/errorPages/brands/0/displayName'"},
		"a colour not a colour":   {set: append(base, "errorPages.brands[0].colors.dark.accent=red"), want: "at '/errorPages/brands/0/colors/dark/accent'"},
		"a logo too large":        {set: append(base, "errorPages.brands[0].logo.svg=<svg>"+strings.Repeat("x", 4096)+"</svg>"), want: "at '/errorPages/brands/0/logo/svg'"},
		"a logo that is no image": {set: append(base, "errorPages.brands[0].logo.svg=<html/>"), want: "at '/errorPages/brands/0/logo/svg'"},
		"a key not a DNS label":   {set: []string{"errorPages.brands[0].name=Acme Pay", "errorPages.brands[0].displayName=A"}, want: "at '/errorPages/brands/0/name'"},
		"a support script link":   {set: append(base, "errorPages.brands[0].support.url=javascript:x"), want: "at '/errorPages/brands/0/support/url'"},
		"a page not a code":       {set: append(base, "errorPages.brands[0].pages.200.title=OK"), want: "invalid propertyName '200'"},
		"a typo":                  {set: append(base, "errorPages.brands[0].colour.light.accent=#fff"), want: "additional properties 'colour' not allowed"},
		"no display name":         {set: []string{"errorPages.brands[0].name=acme"}, want: "missing property 'displayName'"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := runHelm(t, install{set: tc.set}.args("template")...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
}
