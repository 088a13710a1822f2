//go:build e2e

package e2e

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestChartInstalls proves `helm install` of chart/ succeeds on a real API
// server that has Metacontroller's and Traefik's CRDs, that every object it
// renders passes strict server-side validation against their schemas (an
// unknown field in the CompositeController is an error, not a silent drop),
// that the StackResource CRD is Established with its status subresource, and
// that the CompositeController names only resources the server serves. The
// CompositeController's schema is Metacontroller's own when shared/ is there,
// else the one written for this suite; the test log says which.
func TestChartInstalls(t *testing.T) {
	f := framework.NewFixture(t)
	t.Log(f.MetacontrollerCRDs)
	chart := filepath.Join(f.Root, "chart")
	if _, err := os.Stat(filepath.Join(chart, "Chart.yaml")); err != nil {
		t.Skipf("chart/ not there yet: %v", err)
	}
	ctx := t.Context()
	k := f.Kube
	ns := f.Namespace
	const release = "stackdome"

	f.InstallRelease(release, chart, "podCIDRs={10.244.0.0/16}") // the chart has no default: install.md's kind value

	if err := framework.WaitEstablished(ctx, k, framework.StackCRDName); err != nil {
		t.Fatal(err)
	}
	crd, err := k.Get(ctx, framework.CRDPath+"/"+framework.StackCRDName)
	if err != nil {
		t.Fatal(err)
	}
	versions, _ := framework.Dig(crd, "spec", "versions").([]any)
	if len(versions) == 0 || framework.Dig(versions[0], "subresources", "status") == nil {
		t.Errorf("StackResource CRD has no status subresource: Metacontroller ignores such a parent")
	}

	// helm never updates a CRD that exists, and another test may have
	// installed schema/crd.yaml first: whichever did, the chart's CRD must be
	// what is being served. A dry-run apply of the chart's file shows what it
	// would store; everything in its spec must be served with that value. (A
	// field only the served CRD has survives such an apply, so that direction
	// is the chart's own byte-for-byte test against schema/crd.yaml.)
	crdFiles, _ := filepath.Glob(filepath.Join(chart, "crds", "*.yaml"))
	for _, f := range crdFiles {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range framework.SplitYAML(data) {
			h := framework.ManifestHeader(doc)
			served, err := k.Get(ctx, framework.CRDPath+"/"+h.Name)
			if err != nil {
				t.Fatalf("CRD %s from %s: %v", h.Name, filepath.Base(f), err)
			}
			var would obj
			q := url.Values{"dryRun": {"All"}, "fieldValidation": {"Strict"}, "fieldManager": {"e2e-chart-crd"}, "force": {"true"}}
			if err := k.Do(ctx, "PATCH", framework.CRDPath+"/"+h.Name+"?"+q.Encode(), "application/apply-patch+yaml", doc, &would); err != nil {
				t.Fatalf("strict dry-run apply of %s: %v", filepath.Base(f), err)
			}
			if p, why := framework.FirstMismatch("spec", would["spec"], served["spec"]); p != "" {
				t.Errorf("CRD %s served differs from chart/crds/%s at %s: %s", h.Name, filepath.Base(f), p, why)
			}
		}
	}

	manifest, err := f.Helm(ctx, "get", "manifest", release, "--namespace", ns)
	if err != nil {
		t.Fatalf("helm get manifest: %v\n%s", err, manifest)
	}
	docs := framework.SplitYAML(manifest)
	if len(docs) == 0 {
		t.Fatal("helm rendered no objects")
	}
	var ccName string
	for _, doc := range docs {
		h := framework.ManifestHeader(doc)
		if h.Kind == "" {
			t.Errorf("rendered document without kind:\n%s", doc)
			continue
		}
		if h.Namespace == "" {
			h.Namespace = ns
		}
		t.Run(h.Kind+"/"+h.Name, func(t *testing.T) {
			p, err := k.ResourcePath(ctx, h.APIVersion, h.Kind, h.Namespace, h.Name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := k.Get(ctx, p); err != nil {
				t.Fatalf("not stored: %v", err)
			}
			// Re-send what helm rendered as a dry-run apply with strict field
			// validation: an unknown or duplicate field is rejected instead of
			// pruned with a warning nobody reads.
			q := url.Values{"dryRun": {"All"}, "fieldValidation": {"Strict"}, "fieldManager": {"e2e-strict"}, "force": {"true"}}
			if err := k.Do(ctx, "PATCH", p+"?"+q.Encode(), "application/apply-patch+yaml", doc, nil); err != nil {
				t.Errorf("strict validation: %v", err)
			}
		})
		if h.Kind == "CompositeController" {
			ccName = h.Name
			// The check must bite: the same document with a field the
			// schema does not know is rejected, not pruned.
			bad := bytes.Replace(doc, []byte("\nspec:\n"), []byte("\nspec:\n  resyncPeriodSecond: 60\n"), 1)
			p, _ := k.ResourcePath(ctx, h.APIVersion, h.Kind, "", h.Name)
			q := url.Values{"dryRun": {"All"}, "fieldValidation": {"Strict"}, "fieldManager": {"e2e-strict"}, "force": {"true"}}
			err := k.Do(ctx, "PATCH", p+"?"+q.Encode(), "application/apply-patch+yaml", bad, nil)
			if err == nil || !strings.Contains(err.Error(), "resyncPeriodSecond") {
				t.Errorf("strict validation let an unknown CompositeController field through: %v", err)
			}
		}
	}

	if ccName == "" {
		t.Fatal("the chart renders no CompositeController")
	}
	cc, err := k.Get(ctx, "/apis/metacontroller.k8s.io/v1alpha1/compositecontrollers/"+ccName)
	if err != nil {
		t.Fatal(err)
	}
	rules := []any{framework.Dig(cc, "spec", "parentResource")}
	children, _ := framework.Dig(cc, "spec", "childResources").([]any)
	rules = append(rules, children...)
	for _, r := range rules {
		apiVersion, _ := framework.Dig(r, "apiVersion").(string)
		resource, _ := framework.Dig(r, "resource").(string)
		if !framework.ServesResource(ctx, k, apiVersion, resource) {
			t.Errorf("CompositeController %s names %s %q, which the API server does not serve", ccName, apiVersion, resource)
		}
	}
	if svc, _ := framework.Dig(cc, "spec", "hooks", "sync", "webhook", "service").(map[string]any); svc != nil {
		name, _ := svc["name"].(string)
		namespace, _ := svc["namespace"].(string)
		if _, err := k.Get(ctx, "/api/v1/namespaces/"+namespace+"/services/"+name); err != nil {
			t.Errorf("sync hook points at Service %s/%s: %v", namespace, name, err)
		}
	}
}
