//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestCRDUpgrade runs docs/install.md's CRD upgrade command, parsed from the
// page, on the situation every user who followed the page is in: `helm
// install` created the StackResource CRD (from chart/crds/, field manager
// helm), and the next chart version's CRD changes a field of it. Helm never
// updates a CRD, so the page's `kubectl apply --server-side` is what
// upgrades it; server-side apply refuses to take over a field another
// manager set to another value, so without --force-conflicts it fails with
// a conflict with "helm" on the changed field. The test checks both: the
// command without --force-conflicts fails so (which says why the page needs
// the flag), and the page's command as written succeeds and the changed
// field is served.
func TestCRDUpgrade(t *testing.T) {
	f := framework.NewFixture(t)
	cmd := framework.PageCRDUpgradeCommand(t, f.Root)
	ctx := t.Context()
	k := f.Kube

	// The CRD as helm install creates it on a new cluster: whoever created
	// it before in this run (the suite, another test) is not helm.
	if err := framework.DeleteStackResourceCRD(ctx, k); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := framework.DeleteStackResourceCRD(ctx, k); err != nil {
			t.Errorf("deleting the changed CRD: %v", err)
		}
		if err := f.RestoreStackResourceCRD(ctx); err != nil {
			t.Errorf("serving the StackResource CRD again for the tests after this one: %v", err)
		}
	})
	const release = "crd-upgrade"
	// podCIDRs is required since #25 (the chart's dial allow-list); no pod
	// runs here, so install.md's kind value does.
	f.InstallRelease(release, filepath.Join(f.Root, "chart"), "podCIDRs={10.244.0.0/16}")
	if err := framework.WaitEstablished(ctx, k, framework.StackCRDName); err != nil {
		t.Fatal(err)
	}
	crd, err := k.Get(ctx, framework.CRDPath+"/"+framework.StackCRDName)
	if err != nil {
		t.Fatal(err)
	}
	managers := framework.FieldManagers(crd)
	if !slices.Contains(managers, "helm") {
		t.Fatalf("helm install created the CRD with field managers %v, not helm: the page's reason for --force-conflicts is wrong", managers)
	}
	t.Logf("helm install created %s with field managers %v", framework.StackCRDName, managers)

	// The next chart version's CRD: the same file with the description of
	// .spec changed, in a checkout of its own where the page's relative path
	// leads to it.
	checkout := t.TempDir()
	rel := cmd.File
	data, err := os.ReadFile(filepath.Join(f.Root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	const was, now = "description: Spec is what the user declares.", "description: Spec is what the user declares (the next chart version's wording)."
	if bytes.Count(data, []byte(was)) != 1 {
		t.Fatalf("%s: %q is not there once: pick another field to change", rel, was)
	}
	changed := bytes.Replace(data, []byte(was), []byte(now), 1)
	if err := os.MkdirAll(filepath.Dir(filepath.Join(checkout, rel)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(checkout, filepath.FromSlash(rel)), changed, 0o644); err != nil {
		t.Fatal(err)
	}

	run := func(args []string) (string, error) { return f.KubectlIn(ctx, checkout, args[1:]...) }

	without := slices.DeleteFunc(slices.Clone(cmd.Words), func(w string) bool { return w == "--force-conflicts" || w == "--force-conflicts=true" })
	out, err := run(without)
	if err == nil {
		t.Errorf("%q succeeded on a CRD helm created with a field changed: the conflict --force-conflicts is for did not happen\n%s", strings.Join(without, " "), out)
	} else if !strings.Contains(out, "conflict") || !strings.Contains(out, `"helm"`) {
		t.Errorf("%q failed, but not with a conflict with helm's field manager: %v\n%s", strings.Join(without, " "), err, out)
	} else {
		t.Logf("without --force-conflicts, as the page had it: %v\n%s", err, framework.Indent(out))
	}

	out, err = run(cmd.Words)
	if err != nil {
		t.Fatalf("%s: the page's CRD upgrade command, as written, fails on a CRD helm install created once a field changes: %v\n%s", cmd.Block, err, out)
	}
	served, err := k.Get(ctx, framework.CRDPath+"/"+framework.StackCRDName)
	if err != nil {
		t.Fatal(err)
	}
	versions, _ := framework.Dig(served, "spec", "versions").([]any)
	if len(versions) == 0 {
		t.Fatal("the CRD serves no version")
	}
	if got := framework.Dig(versions[0], "schema", "openAPIV3Schema", "properties", "spec", "description"); !strings.HasPrefix(now, "description: "+fmt.Sprint(got)) {
		t.Errorf("after the page's command the CRD's .spec description is %q, want the changed one", got)
	}
	if err := framework.WaitEstablished(ctx, k, framework.StackCRDName); err != nil {
		t.Error(err)
	}
	t.Logf("the page's command: %s\n%s", strings.Join(cmd.Words, " "), framework.Indent(out))
}
