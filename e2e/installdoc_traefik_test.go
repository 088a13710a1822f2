package e2e

// What docs/install.md tells Traefik's Helm chart, checked against the
// chart itself: the pinned chart 41.3.0 from shared/vendor/, rendered with
// bin/helm. This file has no build tag: it runs in `make test`, without a
// cluster, so framework/installdoc_traefik.go has none either.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackdome/stackdome/e2e/framework"
)

// TestInstallDocTraefikValues: every `helm install traefik` of
// docs/install.md, rendered from the pinned Traefik chart with exactly the
// value flags the page passes (parsed from the page), sets only keys the
// chart reads — each is in its values.yaml or values.schema.json — and the
// kind install renders a NodePort Service on the node ports the page's kind
// cluster maps. The page's table of the chart's defaults names keys the
// chart has, with the chart's values; so does its yaml of values for
// Traefik's entry points. A key the chart renames (service.type →
// service.spec.type in chart v40.0.0, read by nothing and refused by
// nothing) fails here, not on a user's cluster.
func TestInstallDocTraefikValues(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", filepath.FromSlash(framework.InstallDoc)))
	if err != nil {
		t.Fatal(err)
	}
	installs, err := framework.TraefikInstalls(doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(installs) == 0 {
		t.Fatalf("%s has no `helm install traefik` command", framework.InstallDoc)
	}
	chart := framework.TraefikChart(t)
	known := framework.ReadChartKeys(t, chart)
	helmBin := framework.HelmBinary(t)

	kindPorts := framework.KindNodePorts(doc)
	if len(kindPorts) == 0 {
		t.Fatalf("%s: no containerPort in the kind cluster's extraPortMappings", framework.InstallDoc)
	}
	pinned := framework.ChartVersion(t, chart)
	nodePortInstalls := 0
	for _, in := range installs {
		t.Run(fmt.Sprintf("line %d", in.Block.Line), func(t *testing.T) {
			// The page pins the chart the suite installs (TestInstallDoc
			// runs it from the pinned archive, whose version helm does not
			// check against --version for a local chart).
			if in.Version != pinned {
				t.Errorf("%s installs Traefik's chart --version %q; the suite installs the pinned %s (%s)", in.Block, in.Version, pinned, framework.TraefikChartArchive)
			}
			for _, k := range in.Sets {
				if !known.Has(k) {
					t.Errorf("%s sets %s, which Traefik's chart %s neither has in values.yaml nor declares in values.schema.json: it is read by nothing", in.Block, k, framework.TraefikChartArchive)
				}
			}
			svc := framework.RenderTraefikService(t, helmBin, chart, in.Args)
			if !slices.ContainsFunc(in.Args, func(a string) bool { return strings.Contains(a, "=NodePort") }) {
				return
			}
			nodePortInstalls++
			var got struct {
				Type  string   `json:"type"`
				Ports []string `json:"nodePorts"`
			}
			got.Type = svc.Spec.Type
			for _, p := range svc.Spec.Ports {
				if p.NodePort != 0 {
					got.Ports = append(got.Ports, strconv.Itoa(p.NodePort))
				}
			}
			slices.Sort(got.Ports)
			want := got
			want.Type, want.Ports = "NodePort", kindPorts
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s: the Service Traefik's chart renders from the page's values is not the NodePort Service on the ports the kind cluster maps (-page +rendered):\n%s", in.Block, d)
			}
		})
	}
	if nodePortInstalls == 0 {
		t.Errorf("%s: no `helm install traefik` asks for a NodePort Service (the kind path needs one)", framework.InstallDoc)
	}

	table, err := framework.ChartDefaultsTable(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range table {
		v, ok := known.DefaultOf(row.Key)
		switch {
		case !known.Has(row.Key):
			t.Errorf("%s: the table of Traefik's chart defaults names %s, which the chart does not have", framework.InstallDoc, row.Key)
		case row.Value != "" && (!ok || v != row.Value):
			t.Errorf("%s: the table of Traefik's chart defaults says %s: %s, the chart's values.yaml has %s", framework.InstallDoc, row.Key, row.Value, v)
		}
	}
	for _, k := range framework.TraefikValuesYAMLKeys(t, doc) {
		if !known.Has(k) {
			t.Errorf("%s: its Traefik chart values set %s, which the chart does not have", framework.InstallDoc, k)
		}
	}
}

// TestInstallDocTraefikValuesBite: the checks fail on the key the page set
// before chart v40.0.0 renamed it, and pass on the one that replaced it.
func TestInstallDocTraefikValuesBite(t *testing.T) {
	chart := framework.TraefikChart(t)
	known := framework.ReadChartKeys(t, chart)
	if known.Has("service.type") {
		t.Error("service.type counted as a key of the chart")
	}
	for _, k := range []string{"service.spec.type", "ports.web.nodePort", "ports.websecure.http.middlewares", "ports.web.http.middlewares"} {
		if !known.Has(k) {
			t.Errorf("%s not counted as a key of the chart", k)
		}
	}
	svc := framework.RenderTraefikService(t, framework.HelmBinary(t), chart, []string{"--set", "service.type=NodePort"})
	if svc.Spec.Type != "LoadBalancer" {
		t.Errorf("with service.type=NodePort the chart rendered a %s Service; the check relies on it being ignored (LoadBalancer)", svc.Spec.Type)
	}
	ins, err := framework.TraefikInstalls([]byte("<!-- e2e: run -->\n```sh\nhelm install traefik traefik/traefik --version 1 --namespace traefik \\\n  --set service.type=NodePort --set 'a.b=1,c.d={x,y}'\n```\n"))
	if err != nil || len(ins) != 1 {
		t.Fatalf("%v %v", ins, err)
	}
	if d := cmp.Diff([]string{"service.type", "a.b", "c.d"}, ins[0].Sets); d != "" {
		t.Errorf("keys (-want +got):\n%s", d)
	}
	for _, cmd := range []string{"helm install traefik traefik/traefik --set-file x=y", `helm install traefik traefik/traefik --set "a=$B"`} {
		if _, err := framework.TraefikInstalls([]byte("<!-- e2e: run -->\n```sh\n" + cmd + "\n```\n")); err == nil {
			t.Errorf("%s: a value the test cannot read was accepted", cmd)
		}
	}
	// A chart given by a variable (a local copy) is fine: only values count.
	if ins, err := framework.TraefikInstalls([]byte("<!-- e2e: run -->\n```sh\nhelm install traefik \"$CHART\" --set a=1\n```\n")); err != nil || len(ins) != 1 {
		t.Errorf("a chart path in a variable: %v %v", ins, err)
	}
}
