//go:build e2e

package node

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestCronJobRunsOnRealNode: a type CronJob (`* * * * *`) whose runs are
// containers of the real node, read by the real Metacontroller through the
// Jobs the customize hook relates:
//
//   - before any run the status reads Available True NotYetRun (nothing
//     has failed);
//   - the CronJob controller's own run, a container exiting 2 (portapp
//     refuses its flag), is a Job owned by CronJob/nightly, and the status
//     reads Available False JobFailed naming the Job and "exited with code
//     2" — the kubelet's own exit code;
//   - the spec fixed and suspended: Stalled True Suspended, and the CronJob
//     carries suspend and the new args;
//   - a Job made by hand from the CronJob's template (as `kubectl create
//     job --from=cronjob/nightly` makes it), its container told to exit 0:
//     Available True, status.run.lastSucceeded the manual Job and lastFailed
//     the controller's.
//
// The release's resyncPeriodSeconds is 2 (the chart's is 60): Metacontroller
// resyncs on a related Job's change too, and the resync bounds each step to
// seconds when a watch event is coalesced. The first run waits for the
// next minute: the test takes one to two minutes.
//
// It bites on the exit code (the message must carry the kubelet's 2, not a
// stand-in's), on the owner, and on each status step.
func TestCronJobRunsOnRealNode(t *testing.T) {
	f := framework.NewNodeFixture(t)
	f.InstallChart("compositeController.resyncPeriodSeconds=2")
	ns := f.Namespace(nil)
	t.Cleanup(func() { f.DescribePods(ns) })
	spec := obj{"type": "CronJob", "image": framework.ImagePortApp, "args": []any{"--no-such-flag"},
		"cronJob": obj{"schedule": "* * * * *", "concurrencyPolicy": "Forbid", "failedJobsHistoryLimit": 2},
		"job":     obj{"backoffLimit": 0}}
	f.CreateApp(ns, "nightly", spec)
	f.WaitCondition(time.Minute, ns, "nightly", "Available", "True", "NotYetRun")

	// The CronJob controller's own run, within the next minute.
	jobs := "/apis/batch/v1/namespaces/" + ns + "/jobs"
	var first obj
	f.WaitFor(100*time.Second, "a Job made by the CronJob controller", func() (bool, error) {
		items, err := f.Kube.List(t.Context(), jobs, "app.kubernetes.io/instance=nightly")
		if len(items) > 0 {
			first = items[0]
		}
		return len(items) > 0, err
	})
	owners, _ := framework.Dig(first, "metadata", "ownerReferences").([]any)
	if len(owners) != 1 || framework.Dig(owners[0], "kind") != "CronJob" || framework.Dig(owners[0], "name") != "nightly" {
		t.Fatalf("Job %v is not the CronJob's: owners %v", framework.Dig(first, "metadata", "name"), owners)
	}
	firstName, _ := framework.Dig(first, "metadata", "name").(string)
	sr := f.WaitCondition(2*time.Minute, ns, "nightly", "Available", "False", "JobFailed")
	if msg, _ := framework.SRCondition(sr, "Available")["message"].(string); !strings.Contains(msg, "Job "+firstName+" failed") || !strings.Contains(msg, "exited with code 2") {
		t.Fatalf("Available's message %q names neither the Job %s nor the exit code 2", msg, firstName)
	}

	// Fixed and suspended, so that the controller starts no more runs;
	// then one run by hand from the job template.
	spec["args"] = []any{"--control", "8079"}
	spec["cronJob"].(obj)["suspend"] = true
	if _, err := f.Kube.MergePatch(t.Context(), framework.SRPath(ns, "nightly"), obj{"spec": spec}); err != nil {
		t.Fatal(err)
	}
	f.WaitCondition(time.Minute, ns, "nightly", "Stalled", "True", "Suspended")
	var cron obj
	f.WaitFor(time.Minute, "the CronJob suspended, with the new args", func() (bool, error) {
		var err error
		if cron, err = f.Kube.Get(t.Context(), "/apis/batch/v1/namespaces/"+ns+"/cronjobs/nightly"); err != nil {
			return false, err
		}
		args := fmt.Sprint(framework.Dig(cron, "spec", "jobTemplate", "spec", "template", "spec", "containers"))
		return framework.Dig(cron, "spec", "suspend") == true && strings.Contains(args, "--control"), fmt.Errorf("suspend %v, containers %s", framework.Dig(cron, "spec", "suspend"), args)
	})
	tmpl, _ := framework.Dig(cron, "spec", "jobTemplate").(obj)
	md, _ := tmpl["metadata"].(obj)
	const manual = "nightly-manual"
	if _, err := f.Kube.Create(t.Context(), jobs, obj{"apiVersion": "batch/v1", "kind": "Job",
		"metadata": obj{"name": manual, "labels": md["labels"], "annotations": obj{"cronjob.kubernetes.io/instantiate": "manual"},
			"ownerReferences": []any{obj{"apiVersion": "batch/v1", "kind": "CronJob", "name": "nightly", "uid": framework.Dig(cron, "metadata", "uid"), "controller": true}}},
		"spec": tmpl["spec"]}); err != nil {
		t.Fatalf("creating a Job from the CronJob's template: %v", err)
	}
	f.ExitPodOf(ns, "batch.kubernetes.io/job-name="+manual, 2*time.Minute)
	f.WaitFor(2*time.Minute, "status.run.lastSucceeded the manual Job", func() (bool, error) {
		var err error
		if sr, err = f.Kube.Get(t.Context(), framework.SRPath(ns, "nightly")); err != nil {
			return false, err
		}
		return framework.Dig(sr, "status", "run", "lastSucceeded", "job") == manual, fmt.Errorf("status.run %v", framework.Dig(sr, "status", "run"))
	})
	if c := framework.SRCondition(sr, "Available"); c["status"] != "True" {
		t.Errorf("after a successful run: Available %v, want True", c)
	}
	if got := framework.Dig(sr, "status", "run", "lastFailed", "job"); got != firstName {
		t.Errorf("status.run.lastFailed.job %v, want %s", got, firstName)
	}
}
