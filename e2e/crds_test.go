//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

const (
	crdPath        = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	stackCRDName   = "stackresources.stackdome.io"
	traefikModule  = "github.com/traefik/traefik/v3@v3.7.11" // the version e2e/traefik builds, the chart's appVersion
	traefikCRDFile = "docs/content/reference/dynamic-configuration/kubernetes-crd-definition-v1.yml"
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

// traefikCRDs returns the path of Traefik's CRD definitions inside the
// traefik module, fetched through the Go module proxy (no release download).
func traefikCRDs(scratch string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", traefikModule)
	// Outside any module, so the main module's go.mod and go.sum are untouched.
	cmd.Dir = scratch
	cmd.Env = append(os.Environ(), "GOWORK=off", "GO111MODULE=on")
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			err = fmt.Errorf("%w: %s", err, ee.Stderr)
		}
		return "", fmt.Errorf("go mod download %s: %w", traefikModule, err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil {
		return "", fmt.Errorf("decoding go mod download output: %w", err)
	}
	if mod.Error != "" {
		return "", fmt.Errorf("go mod download %s: %s", traefikModule, mod.Error)
	}
	return filepath.Join(mod.Dir, filepath.FromSlash(traefikCRDFile)), nil
}

// installPrerequisiteCRDs installs Traefik's CRDs, which a cluster running
// stackdome has before the chart. Metacontroller's come with its manifests
// (startRealMetacontroller's `kubectl apply -k`).
func installPrerequisiteCRDs(ctx context.Context, k *framework.Kube) error {
	tf, err := traefikCRDs(suite.tmp)
	if err != nil {
		return err
	}
	if _, err := installCRDFile(ctx, k, tf); err != nil {
		return fmt.Errorf("installing Traefik CRDs: %w", err)
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
