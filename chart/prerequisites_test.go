package chart

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// failMessage is the message of a template's fail, without Helm's "Error:
// execution error at (file:line:col): " before it.
func failMessage(err error) string {
	if err == nil {
		return ""
	}
	m := regexp.MustCompile(`execution error at \([^)]*\): (.*)`).FindStringSubmatch(err.Error())
	if m == nil {
		return err.Error()
	}
	return m[1]
}

// TestPrerequisitesFromCapabilities: rendered for a cluster that does not
// serve Metacontroller's CompositeController or Traefik's IngressRoute and
// Middleware, the chart fails with one message naming what to install
// first, and how to render without a cluster; crdCheck=false renders the
// same objects as a cluster that has them. (The version check of the
// installed CompositeController CRD reads the live cluster: e2e,
// TestChartRefusesMissingPrerequisites.)
func TestPrerequisitesFromCapabilities(t *testing.T) {
	const (
		head = "this cluster does not serve what stackdome runs on; install first: "
		tail = " (docs/install.md, Prerequisites). Rendering without a cluster: pass the cluster's APIs with --api-versions (Argo CD does), or set crdCheck=false"
		mc   = "Metacontroller 4.16.0 or later (API metacontroller.k8s.io/v1alpha1 CompositeController)"
	)
	tests := map[string]struct {
		apis    []string
		set     []string
		wantErr string
	}{
		"plain helm template: nothing": {
			apis:    []string{},
			wantErr: head + mc + "; Traefik v3's CRDs (API traefik.io/v1alpha1 IngressRoute, Middleware)" + tail,
		},
		"no Metacontroller": {
			apis:    []string{"traefik.io/v1alpha1/IngressRoute", "traefik.io/v1alpha1/Middleware"},
			wantErr: head + mc + tail,
		},
		"no Traefik": {
			apis:    []string{"metacontroller.k8s.io/v1alpha1/CompositeController"},
			wantErr: head + "Traefik v3's CRDs (API traefik.io/v1alpha1 IngressRoute, Middleware)" + tail,
		},
		"Traefik without Middleware": {
			apis:    []string{"metacontroller.k8s.io/v1alpha1/CompositeController", "traefik.io/v1alpha1/IngressRoute"},
			wantErr: head + "Traefik v3's CRDs (API traefik.io/v1alpha1 Middleware)" + tail,
		},
		"another Metacontroller kind only": {
			apis:    []string{"metacontroller.k8s.io/v1alpha1/DecoratorController", "traefik.io/v1alpha1/IngressRoute", "traefik.io/v1alpha1/Middleware"},
			wantErr: head + mc + tail,
		},
		"every kind": {
			apis: []string{"metacontroller.k8s.io/v1alpha1/CompositeController", "traefik.io/v1alpha1/IngressRoute", "traefik.io/v1alpha1/Middleware"},
		},
		"group versions only": {
			apis: []string{"metacontroller.k8s.io/v1alpha1", "traefik.io/v1alpha1"},
		},
		"nothing, check off": {
			apis: []string{},
			set:  []string{"crdCheck=false"},
		},
		"error pages off still needs Traefik: stackdome's children are IngressRoutes": {
			apis:    []string{"metacontroller.k8s.io/v1alpha1/CompositeController"},
			set:     []string{"errorPages.enabled=false"},
			wantErr: head + "Traefik v3's CRDs (API traefik.io/v1alpha1 IngressRoute, Middleware)" + tail,
		},
	}
	want := ids(decode(t, render(t, install{})))
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := install{apiVersions: tc.apis, set: tc.set}
			out, err := runHelm(t, in.args("template", "--include-crds")...)
			if diff := cmp.Diff(tc.wantErr, failMessage(err)); diff != "" {
				t.Fatalf("error (-want +got):\n%s", diff)
			}
			if err == nil && len(tc.set) == 0 {
				if diff := cmp.Diff(want, ids(decode(t, out))); diff != "" {
					t.Errorf("rendered objects (-with every API +got):\n%s", diff)
				}
			}
		})
	}
}

// TestMinMetacontrollerIsDocumented: the one definition of the oldest
// Metacontroller the chart accepts is the version docs/install.md asks for.
func TestMinMetacontrollerIsDocumented(t *testing.T) {
	got := includeTemplate(t, install{}, "stackdome.minMetacontroller")
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`\*\*Metacontroller ≥ ([0-9.]+)\*\*`).FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/install.md states no minimum Metacontroller (**Metacontroller ≥ x.y.z**)")
	}
	if string(m[1]) != got {
		t.Errorf("docs/install.md asks for Metacontroller ≥ %s, the chart checks for %s", m[1], got)
	}
	if !strings.Contains(string(doc), "crdCheck=false") {
		t.Error("docs/install.md does not say how to render without the prerequisite check")
	}
}
