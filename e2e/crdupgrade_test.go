//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
	"github.com/stackdome/stackdome/e2e/installdoc"
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
	cmd := pageCRDUpgradeCommand(t)
	kubectl := suite.kubectl
	ctx := t.Context()
	k := suite.cluster.Kube

	// The CRD as helm install creates it on a new cluster: whoever created
	// it before in this run (the suite, another test) is not helm.
	if err := deleteStackResourceCRD(ctx, k); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := deleteStackResourceCRD(ctx, k); err != nil {
			t.Errorf("deleting the changed CRD: %v", err)
		}
		if err := restoreStackResourceCRD(ctx, k); err != nil {
			t.Errorf("serving the StackResource CRD again for the tests after this one: %v", err)
		}
	})
	ns := newNamespace(t)
	const release = "crd-upgrade"
	// podCIDRs is required since #25 (the chart's dial allow-list); no pod
	// runs here, so install.md's kind value does.
	installRelease(t, release, filepath.Join(suite.root, "chart"), ns, "podCIDRs={10.244.0.0/16}")
	if err := waitEstablished(ctx, k, stackCRDName); err != nil {
		t.Fatal(err)
	}
	crd, err := k.Get(ctx, crdPath+"/"+stackCRDName)
	if err != nil {
		t.Fatal(err)
	}
	managers := fieldManagers(crd)
	if !slices.Contains(managers, "helm") {
		t.Fatalf("helm install created the CRD with field managers %v, not helm: the page's reason for --force-conflicts is wrong", managers)
	}
	t.Logf("helm install created %s with field managers %v", stackCRDName, managers)

	// The next chart version's CRD: the same file with the description of
	// .spec changed, in a checkout of its own where the page's relative path
	// leads to it.
	checkout := t.TempDir()
	rel := cmd.file
	data, err := os.ReadFile(filepath.Join(suite.root, filepath.FromSlash(rel)))
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

	run := func(args []string) (string, error) {
		c := exec.CommandContext(ctx, kubectl, args[1:]...)
		c.Dir = checkout
		c.Env = append(framework.WithoutClusterEnv(os.Environ()), "KUBECONFIG="+suite.cluster.Kubeconfig, "HOME="+t.TempDir())
		out, err := c.CombinedOutput()
		return string(out), err
	}

	without := slices.DeleteFunc(slices.Clone(cmd.words), func(w string) bool { return w == "--force-conflicts" || w == "--force-conflicts=true" })
	out, err := run(without)
	if err == nil {
		t.Errorf("%q succeeded on a CRD helm created with a field changed: the conflict --force-conflicts is for did not happen\n%s", strings.Join(without, " "), out)
	} else if !strings.Contains(out, "conflict") || !strings.Contains(out, `"helm"`) {
		t.Errorf("%q failed, but not with a conflict with helm's field manager: %v\n%s", strings.Join(without, " "), err, out)
	} else {
		t.Logf("without --force-conflicts, as the page had it: %v\n%s", err, framework.Indent(out))
	}

	out, err = run(cmd.words)
	if err != nil {
		t.Fatalf("%s: the page's CRD upgrade command, as written, fails on a CRD helm install created once a field changes: %v\n%s", cmd.block, err, out)
	}
	served, err := k.Get(ctx, crdPath+"/"+stackCRDName)
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
	if err := waitEstablished(ctx, k, stackCRDName); err != nil {
		t.Error(err)
	}
	t.Logf("the page's command: %s\n%s", strings.Join(cmd.words, " "), framework.Indent(out))
}

// crdUpgradeCommand is the page's command that applies the chart's CRD.
type crdUpgradeCommand struct {
	block installdoc.Block
	words []string
	file  string // the CRD file it applies, relative to the repository root
}

// pageCRDUpgradeCommand finds the page's one `kubectl apply … -f
// chart/crds/…` command.
func pageCRDUpgradeCommand(t *testing.T) crdUpgradeCommand {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(suite.root, filepath.FromSlash(installDoc)))
	if err != nil {
		t.Fatal(err)
	}
	blocks, errs := installdoc.Parse(data)
	for _, err := range errs {
		t.Error(err)
	}
	var found []crdUpgradeCommand
	for _, b := range blocks {
		for _, c := range shellCommands(b.Text) {
			if !strings.HasPrefix(c, "kubectl apply ") || !strings.Contains(c, "chart/crds/") {
				continue
			}
			words, err := shellWords(c)
			if err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			cmd := crdUpgradeCommand{block: b, words: words}
			for i, w := range words {
				if (w == "-f" || w == "--filename") && i+1 < len(words) {
					cmd.file = words[i+1]
				} else if f, ok := strings.CutPrefix(w, "--filename="); ok {
					cmd.file = f
				}
			}
			if !strings.HasPrefix(cmd.file, "chart/crds/") {
				t.Fatalf("%s: %q applies no file of chart/crds/", b, c)
			}
			found = append(found, cmd)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: %d commands apply chart/crds/, want the Upgrade section's one", installDoc, len(found))
	}
	return found[0]
}

// fieldManagers are the managers of an object's managedFields, in order.
func fieldManagers(o obj) []string {
	var out []string
	mf, _ := framework.Dig(o, "metadata", "managedFields").([]any)
	for _, m := range mf {
		if name, ok := framework.Dig(m, "manager").(string); ok {
			out = append(out, name)
		}
	}
	return out
}

// deleteStackResourceCRD deletes the StackResource CRD, if it exists, and
// waits until it is gone.
func deleteStackResourceCRD(ctx context.Context, k *framework.Kube) error {
	if err := k.Do(ctx, "DELETE", crdPath+"/"+stackCRDName, "", nil, nil); err != nil && !framework.IsCode(err, 404) {
		return err
	}
	return framework.WaitUntil(time.Minute, 250*time.Millisecond, "the StackResource CRD gone", func() (bool, error) {
		_, err := k.Get(ctx, crdPath+"/"+stackCRDName)
		if framework.IsCode(err, 404) {
			return true, nil
		}
		return false, fmt.Errorf("still there (%v)", err)
	})
}

// restoreStackResourceCRD installs schema/crd.yaml again once a deletion of
// the StackResource CRD has finished, if one ran.
func restoreStackResourceCRD(ctx context.Context, k *framework.Kube) error {
	err := framework.WaitUntil(time.Minute, 250*time.Millisecond, "the StackResource CRD deleted or kept", func() (bool, error) {
		o, err := k.Get(ctx, crdPath+"/"+stackCRDName)
		if framework.IsCode(err, 404) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return framework.Dig(o, "metadata", "deletionTimestamp") == nil, errors.New("being deleted")
	})
	if err != nil {
		return err
	}
	if _, err := k.Get(ctx, crdPath+"/"+stackCRDName); err == nil {
		return waitEstablished(ctx, k, stackCRDName)
	}
	_, err = installCRDFile(ctx, k, filepath.Join(suite.root, "schema", "crd.yaml"))
	return err
}
