//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	t.Log(suite.mcCRDs)
	chart := filepath.Join(suite.root, "chart")
	if _, err := os.Stat(filepath.Join(chart, "Chart.yaml")); err != nil {
		t.Skipf("chart/ not there yet: %v", err)
	}
	ctx := t.Context()
	k := suite.cluster.Kube
	ns := newNamespace(t)
	const release = "stackdome"

	installRelease(t, release, chart, ns, "podCIDRs={10.244.0.0/16}") // the chart has no default: install.md's kind value

	if err := waitEstablished(ctx, k, stackCRDName); err != nil {
		t.Fatal(err)
	}
	crd, err := k.Get(ctx, crdPath+"/"+stackCRDName)
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
			h := manifestHeader(doc)
			served, err := k.Get(ctx, crdPath+"/"+h.name)
			if err != nil {
				t.Fatalf("CRD %s from %s: %v", h.name, filepath.Base(f), err)
			}
			var would obj
			q := url.Values{"dryRun": {"All"}, "fieldValidation": {"Strict"}, "fieldManager": {"e2e-chart-crd"}, "force": {"true"}}
			if err := k.Do(ctx, "PATCH", crdPath+"/"+h.name+"?"+q.Encode(), "application/apply-patch+yaml", doc, &would); err != nil {
				t.Fatalf("strict dry-run apply of %s: %v", filepath.Base(f), err)
			}
			if p, why := firstMismatch("spec", would["spec"], served["spec"]); p != "" {
				t.Errorf("CRD %s served differs from chart/crds/%s at %s: %s", h.name, filepath.Base(f), p, why)
			}
		}
	}

	manifest, err := helm(ctx, "get", "manifest", release, "--namespace", ns)
	if err != nil {
		t.Fatalf("helm get manifest: %v\n%s", err, manifest)
	}
	docs := framework.SplitYAML(manifest)
	if len(docs) == 0 {
		t.Fatal("helm rendered no objects")
	}
	var ccName string
	for _, doc := range docs {
		h := manifestHeader(doc)
		if h.kind == "" {
			t.Errorf("rendered document without kind:\n%s", doc)
			continue
		}
		if h.namespace == "" {
			h.namespace = ns
		}
		t.Run(h.kind+"/"+h.name, func(t *testing.T) {
			p, err := k.ResourcePath(ctx, h.apiVersion, h.kind, h.namespace, h.name)
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
		if h.kind == "CompositeController" {
			ccName = h.name
			// The check must bite: the same document with a field the
			// schema does not know is rejected, not pruned.
			bad := bytes.Replace(doc, []byte("\nspec:\n"), []byte("\nspec:\n  resyncPeriodSecond: 60\n"), 1)
			p, _ := k.ResourcePath(ctx, h.apiVersion, h.kind, "", h.name)
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
		if !servesResource(ctx, k, apiVersion, resource) {
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

// servesResource reports whether discovery lists resource under apiVersion.
func servesResource(ctx context.Context, k *framework.Kube, apiVersion, resource string) bool {
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

// installRelease installs chart as release in ns with the values set, and
// uninstalls it when the test ends; a failure of either fails t. It waits
// for no pod: with no kubelet the chart's pods stay Pending (e2e/node runs
// them).
func installRelease(t *testing.T, release, chart, ns string, set ...string) {
	t.Helper()
	args := []string{"install", release, chart, "--namespace", ns, "--timeout", "2m"}
	for _, v := range set {
		args = append(args, "--set", v)
	}
	if out, err := helm(t.Context(), args...); err != nil {
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if out, err := helm(ctx, "uninstall", release, "--namespace", ns); err != nil {
			t.Errorf("helm uninstall: %v\n%s", err, out)
		}
	})
}

// helm runs bin/helm (built by `make tools`) against the test cluster, with
// its config, cache and data kept in the run's scratch directory.
func helm(ctx context.Context, args ...string) ([]byte, error) {
	return helmOn(ctx, suite.cluster.Kubeconfig, args...)
}

// helmOn runs bin/helm against the cluster of kubeconfig.
func helmOn(ctx context.Context, kubeconfig string, args ...string) ([]byte, error) {
	bin := filepath.Join(suite.root, "bin", "helm")
	if _, err := os.Stat(bin); err != nil {
		return nil, err
	}
	home := filepath.Join(suite.tmp, "helm")
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append(args, "--kubeconfig", kubeconfig)...)
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
		"KUBECONFIG="+kubeconfig,
	)
	return cmd.CombinedOutput()
}

type header struct{ apiVersion, kind, name, namespace string }

// manifestHeader reads apiVersion, kind, metadata.name and metadata.namespace
// from a rendered manifest: top-level scalars and the two-space-indented keys
// under metadata, which is how helm and toYaml print them.
func manifestHeader(doc []byte) header {
	var h header
	inMeta := false
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "#") || strings.TrimSpace(line) == "" {
			continue
		}
		if !strings.HasPrefix(line, " ") {
			inMeta = strings.TrimSpace(line) == "metadata:"
			key, val, _ := strings.Cut(line, ":")
			val = unquote(val)
			switch key {
			case "apiVersion":
				h.apiVersion = val
			case "kind":
				h.kind = val
			}
			continue
		}
		if inMeta && strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") {
			key, val, _ := strings.Cut(strings.TrimSpace(line), ":")
			switch key {
			case "name":
				h.name = unquote(val)
			case "namespace":
				h.namespace = unquote(val)
			}
		}
	}
	return h
}

func unquote(s string) string {
	return strings.Trim(strings.TrimSpace(s), `"'`)
}
