//go:build e2e

package framework

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	kyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Installing CRDs and waiting for them: the prerequisites' (Traefik's and
// Metacontroller's) and stackdome's StackResource CRD.

const (
	CRDPath      = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	StackCRDName = "stackresources.stackdome.io"
)

// InstallCRDFile creates every CustomResourceDefinition in a multi-document
// YAML file (sent as YAML; the API server decodes it) and waits until each is
// Established. It returns their names.
func InstallCRDFile(ctx context.Context, k *Kube, path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var names []string
	for i, doc := range SplitYAML(data) {
		o, err := k.CreateYAML(ctx, CRDPath, doc)
		if err != nil {
			return nil, fmt.Errorf("%s document %d: %w", filepath.Base(path), i, err)
		}
		if kind, _ := o["kind"].(string); kind != "CustomResourceDefinition" {
			return nil, fmt.Errorf("%s document %d: kind %q, want CustomResourceDefinition", filepath.Base(path), i, kind)
		}
		names = append(names, Dig(o, "metadata", "name").(string))
	}
	for _, name := range names {
		if err := WaitEstablished(ctx, k, name); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// WaitEstablished waits for the CRD's Established condition; a
// NamesAccepted=False is reported at once, it never resolves by waiting.
func WaitEstablished(ctx context.Context, k *Kube, name string) error {
	return WaitUntil(30*time.Second, 100*time.Millisecond, "CRD "+name+" Established", func() (bool, error) {
		o, err := k.Get(ctx, CRDPath+"/"+name)
		if err != nil {
			return false, err
		}
		conds, _ := Dig(o, "status", "conditions").([]any)
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
// its pinned chart (TraefikChartPath), extracted under the suite's scratch:
// what `helm install` of Traefik's chart creates first. The chart's
// hub.traefik.io CRDs are Traefik Hub's, which nothing here uses.
func (s *Suite) traefikCRDs() ([]string, error) {
	chart, err := TraefikChartPath(s.Shared, filepath.Join(s.Scratch, "traefik-chart"))
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

// InstallTraefikCRDs installs Traefik's CRDs (traefikCRDs) on k, the
// suite's cluster or one a test started, and waits until each is Established.
func (s *Suite) InstallTraefikCRDs(ctx context.Context, k *Kube) error {
	files, err := s.traefikCRDs()
	if err != nil {
		return err
	}
	for _, f := range files {
		if _, err := InstallCRDFile(ctx, k, f); err != nil {
			return fmt.Errorf("installing Traefik's CRDs: %w", err)
		}
	}
	return nil
}

// installPrerequisiteCRDs installs what a cluster running stackdome has
// before the chart: Traefik's CRDs and Metacontroller's (s.MetacontrollerCRDs).
// Only CRDs: nothing here runs Metacontroller or Traefik.
func (s *Suite) installPrerequisiteCRDs(ctx context.Context, k *Kube) error {
	if err := s.InstallTraefikCRDs(ctx, k); err != nil {
		return err
	}
	if _, err := InstallCRDFile(ctx, k, s.MetacontrollerCRDs.Path); err != nil {
		return fmt.Errorf("installing Metacontroller's CRDs: %w", err)
	}
	return nil
}

// RequireStackResourceCRD makes sure the StackResource CRD from schema/crd.yaml
// is installed and Established, whichever test needs it first. When the chart
// test installed it already (the chart's copy is the same bytes), it is kept.
// The test skips when schema/crd.yaml is not there and fails when the
// installation did; the installation runs once a run, its outcome is every
// later caller's.
func (f *Fixture) RequireStackResourceCRD() {
	t := f.t
	t.Helper()
	path := filepath.Join(f.Root, "schema", "crd.yaml")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("schema/crd.yaml not there yet (%v): nothing to install", err)
	}
	f.stackCRD.once.Do(func() {
		ctx := context.Background()
		k := f.Kube
		if _, err := k.Get(ctx, CRDPath+"/"+StackCRDName); err == nil {
			f.stackCRD.err = WaitEstablished(ctx, k, StackCRDName)
			return
		}
		if _, err := InstallCRDFile(ctx, k, path); err != nil {
			f.stackCRD.err = fmt.Errorf("installing schema/crd.yaml: %w", err)
		}
	})
	if f.stackCRD.err != nil {
		t.Fatal(f.stackCRD.err)
	}
}

// FieldManagers are the managers of an object's managedFields, in order.
func FieldManagers(o Obj) []string {
	var out []string
	mf, _ := Dig(o, "metadata", "managedFields").([]any)
	for _, m := range mf {
		if name, ok := Dig(m, "manager").(string); ok {
			out = append(out, name)
		}
	}
	return out
}

// DeleteStackResourceCRD deletes the StackResource CRD, if it exists, and
// waits until it is gone.
func DeleteStackResourceCRD(ctx context.Context, k *Kube) error {
	if err := k.Do(ctx, "DELETE", CRDPath+"/"+StackCRDName, "", nil, nil); err != nil && !IsCode(err, 404) {
		return err
	}
	return WaitUntil(time.Minute, 250*time.Millisecond, "the StackResource CRD gone", func() (bool, error) {
		_, err := k.Get(ctx, CRDPath+"/"+StackCRDName)
		if IsCode(err, 404) {
			return true, nil
		}
		return false, fmt.Errorf("still there (%v)", err)
	})
}

// RestoreStackResourceCRD installs schema/crd.yaml on the suite's cluster
// again once a deletion of the StackResource CRD has finished, if one ran,
// and waits until it is Established.
func (s *Suite) RestoreStackResourceCRD(ctx context.Context) error {
	k := s.Cluster.Kube
	err := WaitUntil(time.Minute, 250*time.Millisecond, "the StackResource CRD deleted or kept", func() (bool, error) {
		o, err := k.Get(ctx, CRDPath+"/"+StackCRDName)
		if IsCode(err, 404) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return Dig(o, "metadata", "deletionTimestamp") == nil, errors.New("being deleted")
	})
	if err != nil {
		return err
	}
	if _, err := k.Get(ctx, CRDPath+"/"+StackCRDName); err == nil {
		return WaitEstablished(ctx, k, StackCRDName)
	}
	_, err = InstallCRDFile(ctx, k, filepath.Join(s.Root, "schema", "crd.yaml"))
	return err
}

// CompositeControllerCRD is the CompositeController CRD the suite installs
// (Suite.MetacontrollerCRDs), as JSON; the test fails without one.
func (f *Fixture) CompositeControllerCRD() Obj {
	t := f.t
	t.Helper()
	data, err := os.ReadFile(f.MetacontrollerCRDs.Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range SplitYAML(data) {
		js, err := kyaml.ToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		var o Obj
		if err := json.Unmarshal(js, &o); err != nil {
			t.Fatal(err)
		}
		if Dig(o, "metadata", "name") == "compositecontrollers.metacontroller.k8s.io" {
			return o
		}
	}
	t.Fatalf("%s has no CompositeController CRD", f.MetacontrollerCRDs.Path)
	return nil
}

// ServesResource reports whether discovery lists resource under apiVersion.
func ServesResource(ctx context.Context, k *Kube, apiVersion, resource string) bool {
	p := "/apis/" + apiVersion
	if !strings.Contains(apiVersion, "/") {
		p = "/api/" + apiVersion
	}
	var list struct {
		Resources []struct{ Name string } `json:"resources"`
	}
	if err := k.Do(ctx, "GET", p, "", nil, &list); err != nil {
		return false
	}
	for _, r := range list.Resources {
		if r.Name == resource {
			return true
		}
	}
	return false
}
