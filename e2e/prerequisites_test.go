//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stackdome/stackdome/e2e/framework"
)

// TestChartRefusesMissingPrerequisites installs the chart with helm on a
// control plane of its own that starts with no CRD at all, and adds what
// stackdome runs on step by step: each `helm install` fails with the chart's
// message naming what to install first — nothing there, then Traefik's CRDs
// but no Metacontroller, then a CompositeController CRD whose sync hook has
// no version field (an older Metacontroller: the API server would prune the
// chart's version), then one whose version takes v1 only — until
// Metacontroller's own CRD is there and the install succeeds, and `helm
// status` shows the NOTES' lines for pods that cannot pull their image. A
// failed install stores no release (the chart fails while rendering).
func TestChartRefusesMissingPrerequisites(t *testing.T) {
	f := framework.NewFixture(t)
	ctx := t.Context()
	start := time.Now()
	c, err := framework.StartCluster(ctx, f.BinDir, filepath.Join(f.Scratch, "bare-cluster"), "10.0.0.0/24")
	if err != nil {
		t.Fatalf("starting a bare control plane: %v", err)
	}
	t.Cleanup(c.Stop)
	t.Logf("bare control plane up in %s", time.Since(start).Round(100*time.Millisecond))
	k := c.Kube
	chart := filepath.Join(f.Root, "chart")

	const (
		head = "this cluster does not serve what stackdome runs on; install first: "
		tail = " (docs/install.md, Prerequisites). Rendering without a cluster: pass the cluster's APIs with --api-versions (Argo CD does), or set crdCheck=false"
		mc   = "Metacontroller 4.16.0 or later (API metacontroller.k8s.io/v1alpha1 CompositeController)"
		tf   = "Traefik v3's CRDs (API traefik.io/v1alpha1 IngressRoute, Middleware)"
		old  = "the installed CompositeController CRD (compositecontrollers.metacontroller.k8s.io) is from a Metacontroller older than 4.16.0: its hooks take no clientTLS (or no sync hook version v2), so the API server would drop the chart's client certificate and hook version. Upgrade Metacontroller and its CRDs to 4.16.0 or later first"
	)
	install := func(t *testing.T, want string) {
		t.Helper()
		out, err := f.HelmOn(ctx, c.Kubeconfig, "install", "stackdome", chart, "--namespace", "stackdome", "--create-namespace", "--timeout", "2m",
			"--set", "podCIDRs={10.244.0.0/16}")
		got := ""
		if err != nil {
			m := regexp.MustCompile(`execution error at \([^)]*\): (.*)`).FindSubmatch(out)
			if m == nil {
				t.Fatalf("helm install failed without the chart's message: %v\n%s", err, out)
			}
			got = string(m[1])
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("helm install's error (-want +got):\n%s\n%s", diff, out)
		}
		if err == nil {
			t.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if out, err := f.HelmOn(ctx, c.Kubeconfig, "uninstall", "stackdome", "--namespace", "stackdome"); err != nil {
					t.Errorf("helm uninstall: %v\n%s", err, out)
				}
			})
			return
		}
		if out, err := f.HelmOn(ctx, c.Kubeconfig, "list", "--all", "--namespace", "stackdome", "--short"); err != nil || len(out) > 0 {
			t.Errorf("a refused install left a release: %v\n%s", err, out)
		}
	}
	served := func(t *testing.T, apiVersion, resource string) {
		t.Helper()
		if err := framework.WaitUntil(30*time.Second, 100*time.Millisecond, apiVersion+" "+resource+" in discovery", func() (bool, error) {
			return framework.ServesResource(ctx, k, apiVersion, resource), nil
		}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("no CRD at all", func(t *testing.T) { install(t, head+mc+"; "+tf+tail) })

	if err := f.InstallTraefikCRDs(ctx, k); err != nil {
		t.Fatal(err)
	}
	served(t, "traefik.io/v1alpha1", "ingressroutes")
	served(t, "traefik.io/v1alpha1", "middlewares")
	t.Run("Traefik, no Metacontroller", func(t *testing.T) { install(t, head+mc+tail) })

	crd := f.CompositeControllerCRD()
	syncVersion := func(crd obj) obj {
		versions, _ := framework.Dig(crd, "spec", "versions").([]any)
		for _, v := range versions {
			if framework.Dig(v, "name") == "v1alpha1" {
				return framework.Dig(v, "schema", "openAPIV3Schema", "properties", "spec", "properties", "hooks", "properties", "sync", "properties").(obj)
			}
		}
		t.Fatal("the CompositeController CRD serves no v1alpha1")
		return nil
	}
	enum := fmt.Sprint(framework.Dig(syncVersion(crd), "version", "enum"))

	// An older Metacontroller's CRD: no hooks.sync.version.
	older := framework.DeepCopy(crd).(obj)
	delete(syncVersion(older), "version")
	data, err := json.Marshal(older)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := k.CreateYAML(ctx, framework.CRDPath, data); err != nil {
		t.Fatalf("creating the older CompositeController CRD: %v", err)
	}
	name := framework.Dig(crd, "metadata", "name").(string)
	if err := framework.WaitEstablished(ctx, k, name); err != nil {
		t.Fatal(err)
	}
	served(t, "metacontroller.k8s.io/v1alpha1", "compositecontrollers")
	t.Run("a CompositeController CRD without hooks.sync.version", func(t *testing.T) { install(t, old) })

	replace := func(t *testing.T, want obj) {
		t.Helper()
		cur, err := k.Get(ctx, framework.CRDPath+"/"+name)
		if err != nil {
			t.Fatal(err)
		}
		want = framework.DeepCopy(want).(obj)
		want["metadata"].(obj)["resourceVersion"] = framework.Dig(cur, "metadata", "resourceVersion")
		if _, err := k.Put(ctx, framework.CRDPath+"/"+name, want); err != nil {
			t.Fatalf("replacing the CompositeController CRD: %v", err)
		}
	}
	v1Only := framework.DeepCopy(crd).(obj)
	syncVersion(v1Only)["version"].(obj)["enum"] = []any{"v1"}
	replace(t, v1Only)
	t.Run("a CompositeController CRD whose sync hook takes v1 only", func(t *testing.T) { install(t, old) })

	// A CRD of 4.15.x: version v2, but no webhook clientTLS (4.16.0).
	noClientTLS := framework.DeepCopy(crd).(obj)
	delete(syncVersion(noClientTLS)["webhook"].(obj)["properties"].(obj), "clientTLS")
	replace(t, noClientTLS)
	t.Run("a CompositeController CRD whose webhooks take no clientTLS", func(t *testing.T) { install(t, old) })

	replace(t, crd)
	t.Run(fmt.Sprintf("Metacontroller's CRD (sync version enum %s)", enum), func(t *testing.T) {
		install(t, "")
		// What an operator sees later: helm status repeats the NOTES,
		// with how to check pods that cannot pull the image.
		out, err := f.HelmOn(ctx, c.Kubeconfig, "status", "stackdome", "--namespace", "stackdome")
		if err != nil {
			t.Fatalf("helm status: %v\n%s", err, out)
		}
		for _, want := range []string{
			"ErrImagePull or ImagePullBackOff",
			"kubectl -n stackdome describe pods -l app.kubernetes.io/name=stackdome,app.kubernetes.io/instance=stackdome,app.kubernetes.io/component=controller",
			"release pulls\n     ghcr.io/stackdome/stackdome:",
		} {
			if !strings.Contains(string(out), want) {
				t.Errorf("helm status lacks %q:\n%s", want, out)
			}
		}
	})
}
