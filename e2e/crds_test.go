//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

const (
	crdPath      = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	stackCRDName = "stackresources.stackdome.io"
)

// installCRDFile creates every CustomResourceDefinition in a multi-document
// YAML file (sent as YAML; the API server decodes it) and waits until each is
// Established. It returns their names.
func installCRDFile(ctx context.Context, k *framework.Kube, path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var names []string
	for i, doc := range framework.SplitYAML(data) {
		o, err := k.CreateYAML(ctx, crdPath, doc)
		if err != nil {
			return nil, fmt.Errorf("%s document %d: %w", filepath.Base(path), i, err)
		}
		if kind, _ := o["kind"].(string); kind != "CustomResourceDefinition" {
			return nil, fmt.Errorf("%s document %d: kind %q, want CustomResourceDefinition", filepath.Base(path), i, kind)
		}
		names = append(names, framework.Dig(o, "metadata", "name").(string))
	}
	for _, name := range names {
		if err := waitEstablished(ctx, k, name); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// waitEstablished waits for the CRD's Established condition; a
// NamesAccepted=False is reported at once, it never resolves by waiting.
func waitEstablished(ctx context.Context, k *framework.Kube, name string) error {
	return framework.WaitUntil(30*time.Second, 100*time.Millisecond, "CRD "+name+" Established", func() (bool, error) {
		o, err := k.Get(ctx, crdPath+"/"+name)
		if err != nil {
			return false, err
		}
		conds, _ := framework.Dig(o, "status", "conditions").([]any)
		for _, c := range conds {
			c, _ := c.(map[string]any)
			if c["type"] == "Established" && c["status"] == "True" {
				return true, nil
			}
			if c["type"] == "NamesAccepted" && c["status"] == "False" {
				return false, fmt.Errorf("CRD %s names not accepted: %v", name, c["message"])
			}
		}
		return false, fmt.Errorf("CRD %s not Established yet", name)
	})
}

// traefikCRDs returns the files of Traefik's own CRDs (API traefik.io) in
// its pinned chart (framework.TraefikChartPath), extracted under scratch:
// what `helm install` of Traefik's chart creates first. The chart's
// hub.traefik.io CRDs are Traefik Hub's, which nothing here uses.
func traefikCRDs(scratch string) ([]string, error) {
	chart, err := framework.TraefikChartPath(suite.shared, filepath.Join(scratch, "traefik-chart"))
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(chart, "crds", "traefik.io_*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no crds/traefik.io_*.yaml", chart)
	}
	return files, nil
}

// installTraefikCRDs installs Traefik's CRDs (traefikCRDs) on k.
func installTraefikCRDs(ctx context.Context, k *framework.Kube) error {
	files, err := traefikCRDs(suite.tmp)
	if err != nil {
		return err
	}
	for _, f := range files {
		if _, err := installCRDFile(ctx, k, f); err != nil {
			return fmt.Errorf("installing Traefik's CRDs: %w", err)
		}
	}
	return nil
}

// installPrerequisiteCRDs installs what a cluster running stackdome has
// before the chart: Traefik's CRDs and Metacontroller's (suite.mcCRDs).
// Only CRDs: nothing here runs Metacontroller or Traefik.
func installPrerequisiteCRDs(ctx context.Context, k *framework.Kube) error {
	if err := installTraefikCRDs(ctx, k); err != nil {
		return err
	}
	if _, err := installCRDFile(ctx, k, suite.mcCRDs.path); err != nil {
		return fmt.Errorf("installing Metacontroller's CRDs: %w", err)
	}
	return nil
}

var stackCRD struct {
	once sync.Once
	err  error
}

// requireStackResourceCRD makes sure the StackResource CRD from schema/crd.yaml
// is installed and Established, whichever test needs it first. When the chart
// test installed it already (the chart's copy is the same bytes), it is kept.
func requireStackResourceCRD(t *testing.T) {
	t.Helper()
	path := filepath.Join(suite.root, "schema", "crd.yaml")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("schema/crd.yaml not there yet (%v): nothing to install", err)
	}
	stackCRD.once.Do(func() {
		ctx := context.Background()
		k := suite.cluster.Kube
		if _, err := k.Get(ctx, crdPath+"/"+stackCRDName); err == nil {
			stackCRD.err = waitEstablished(ctx, k, stackCRDName)
			return
		}
		if _, err := installCRDFile(ctx, k, path); err != nil {
			stackCRD.err = fmt.Errorf("installing schema/crd.yaml: %w", err)
		}
	})
	if stackCRD.err != nil {
		t.Fatal(stackCRD.err)
	}
}
