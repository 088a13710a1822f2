//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestAdmissionWorkloads proves the CRD's rules for sidecars and the
// run-to-completion types on a real API server: a Job or CronJob refuses
// every port-only field with one message saying why, a CronJob needs its
// schedule and the schedule its shape, and a port names an existing
// container. The schedule's full grammar is the CronJob controller's parser
// (schema.Validate); CEL checks its shape.
func TestAdmissionWorkloads(t *testing.T) {
	requireStackResourceCRD(t)
	ns := newNamespace(t)
	path := "/apis/stackdome.io/v1alpha1/namespaces/" + ns + "/stackresources?dryRun=All"
	job := func(edits obj) obj {
		s := obj{"type": "Job", "image": "example.invalid/backfill:1", "job": obj{"backoffLimit": 2, "activeDeadlineSeconds": 600}}
		for k, v := range edits {
			s[k] = v
		}
		return s
	}
	cron := func(edits obj) obj {
		s := obj{"type": "CronJob", "image": "example.invalid/report:1",
			"cronJob": obj{"schedule": "0 3 * * *", "timeZone": "Europe/Berlin", "concurrencyPolicy": "Forbid", "startingDeadlineSeconds": 300,
				"successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1, "suspend": false}}
		for k, v := range edits {
			s[k] = v
		}
		return s
	}
	portOnly := "type Job and CronJob run to completion and serve nothing"
	tryAdmission(t, path, map[string]admissionCase{
		"a Job":               {spec: job(nil)},
		"a CronJob":           {spec: cron(nil)},
		"a CronJob @daily":    {spec: cron(obj{"cronJob": obj{"schedule": "@daily"}})},
		"a Job with ports":    {spec: job(obj{"ports": []any{obj{"name": "http", "port": 8080}}}), want: []string{"spec.ports", portOnly, "ports is for type Service and StatefulService"}},
		"a Job with a host":   {spec: job(obj{"host": "a.example.com"}), want: []string{portOnly}},
		"a CronJob with tls":  {spec: cron(obj{"tls": obj{}}), want: []string{portOnly}},
		"a CronJob autoscale": {spec: cron(obj{"autoscaling": obj{"maxReplicas": 3}, "resources": obj{"requests": obj{"cpu": "100m"}}}), want: []string{portOnly}},
		"a Job with replicas": {spec: job(obj{"replicas": 2}), want: []string{portOnly}},
		"a Job with errorPages and middlewares": {spec: job(obj{"errorPages": obj{"enabled": false}, "middlewares": []any{obj{"name": "sso"}}}),
			want: []string{portOnly}},
		"a CronJob without cronJob": {spec: obj{"type": "CronJob", "image": "example.invalid/report:1"}, want: []string{"cronJob is required for type CronJob"}},
		"cronJob on a Service":      {spec: specWith(obj{"cronJob": obj{"schedule": "@daily"}}), want: []string{"spec.cronJob", "cronJob is only for type CronJob"}},
		"job on a Service":          {spec: specWith(obj{"job": obj{"backoffLimit": 1}}), want: []string{"job is only for type Job or CronJob"}},
		"a schedule of four fields": {spec: cron(obj{"cronJob": obj{"schedule": "0 3 * *"}}), want: []string{"cronJob.schedule must be five fields"}},
		"TZ in the schedule with a timeZone": {spec: cron(obj{"cronJob": obj{"schedule": "CRON_TZ=UTC 0 3 * * *", "timeZone": "UTC"}}),
			want: []string{"set cronJob.timeZone instead"}},
		"an unknown concurrencyPolicy": {spec: cron(obj{"cronJob": obj{"schedule": "@daily", "concurrencyPolicy": "Sometimes"}}),
			want: []string{"spec.cronJob.concurrencyPolicy", `Unsupported value: "Sometimes"`}},
		"a sidecar": {spec: specWith(obj{"ports": []any{obj{"name": "http", "port": 8080}, obj{"name": "proxy", "port": 4180, "container": "oauth2-proxy"}},
			"files":    []any{obj{"name": "cfg", "mountPath": "/etc/cfg", "configMap": obj{"name": "cfg"}}},
			"sidecars": []any{obj{"name": "oauth2-proxy", "image": "example.invalid/proxy:1", "files": []any{"cfg"}, "env": []any{obj{"name": "A", "value": "b"}}}}})},
		"a sidecar named app": {spec: specWith(obj{"sidecars": []any{obj{"name": "app", "image": "example.invalid/proxy:1"}}}),
			want: []string{"a sidecar cannot be named app or migrate"}},
		"two sidecars of one name": {spec: specWith(obj{"sidecars": []any{obj{"name": "p", "image": "x"}, obj{"name": "p", "image": "y"}}}),
			want: []string{"sidecar names must be unique"}},
		"a port of no container": {spec: specWith(obj{"ports": []any{obj{"name": "http", "port": 8080, "container": "proxy"}}}),
			want: []string{"a port's container must be app or the name of a sidecar"}},
		"a sidecar file not in spec.files": {spec: specWith(obj{"sidecars": []any{obj{"name": "p", "image": "x", "files": []any{"cfg"}}}}),
			want: []string{"a sidecar's files must name entries of spec.files"}},
	})
}

// TestCronJobRuns runs a type CronJob on the real control plane:
// kube-controller-manager's CronJob controller takes the CronJob stackdome
// returned and creates a Job from it on schedule, the Job controller makes
// its pod, and stackdome reads the run back through the Jobs the customize
// hook relates. The schedule is every minute, so the wait for the
// controller's own Job is bounded at 100 s; the second run is made from the
// CronJob's job template the way `kubectl create job --from=cronjob/...`
// does, which tests the same reading without a second minute. There is no
// kubelet: the test ends each run's pod as one would (phase, exit code).
//
// The release's resyncPeriodSeconds is 2 (the chart's is 60): the real
// Metacontroller resyncs on a related Job's change too, and the resync
// bounds each step to seconds when a watch event is coalesced.
func TestCronJobRuns(t *testing.T) {
	requireStackResourceCRD(t)
	rel := newPagesRelease(t, "stackdome")
	rel.install(t, "", "compositeController.resyncPeriodSeconds=2")
	ns := newNamespace(t)
	k := suite.cluster.Kube
	ctx := t.Context()
	base := "/apis/stackdome.io/v1alpha1/namespaces/" + ns + "/stackresources"
	spec := obj{"type": "CronJob", "image": "example.invalid/report:1", "args": []any{"nightly"},
		"cronJob": obj{"schedule": "* * * * *", "concurrencyPolicy": "Forbid", "failedJobsHistoryLimit": 2},
		"job":     obj{"backoffLimit": 0}}
	since := time.Now()
	if _, err := k.Create(ctx, base, obj{"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource",
		"metadata": obj{"name": "nightly"}, "spec": spec}); err != nil {
		t.Fatal(err)
	}
	syncAnswer(t, ns, "nightly", since, 90*time.Second, "before any run: Available NotYetRun", reasonIs("Available", "NotYetRun"))

	// The CronJob controller's own run.
	jobs := "/apis/batch/v1/namespaces/" + ns + "/jobs"
	var first obj
	err := framework.WaitUntil(100*time.Second, time.Second, "a Job made by the CronJob controller", func() (bool, error) {
		items, err := suite.cluster.Kube.List(ctx, jobs, "app.kubernetes.io/instance=nightly")
		if len(items) > 0 {
			first = items[0]
		}
		return len(items) > 0, err
	})
	if err != nil {
		t.Fatal(err)
	}
	owners, _ := framework.Dig(first, "metadata", "ownerReferences").([]any)
	if len(owners) != 1 || framework.Dig(owners[0], "kind") != "CronJob" || framework.Dig(owners[0], "name") != "nightly" {
		t.Fatalf("Job %s is not the CronJob's: owners %s", framework.Dig(first, "metadata", "name"), mustJSON(owners))
	}
	firstName := framework.Dig(first, "metadata", "name").(string)
	endRun(t, ns, firstName, 3)
	since = time.Now()
	waitJobCondition(t, ns, firstName, "Failed")
	res := syncAnswer(t, ns, "nightly", since, 90*time.Second, "after a failed run: Available JobFailed", reasonIs("Available", "JobFailed"))
	msg, _ := condition(res.Response, "Available")["message"].(string)
	if !strings.Contains(msg, "Job "+firstName+" failed") || !strings.Contains(msg, "exited with code 3") {
		t.Fatalf("Available's message %q names neither the Job %s nor the exit code 3", msg, firstName)
	}

	// Suspend, so that the controller starts no more runs, then run once
	// by hand from the job template.
	spec["cronJob"].(obj)["suspend"] = true
	since = time.Now()
	if _, err := k.MergePatch(ctx, base+"/nightly", obj{"spec": spec}); err != nil {
		t.Fatal(err)
	}
	res = syncAnswer(t, ns, "nightly", since, 90*time.Second, "suspended: Stalled Suspended", reasonIs("Stalled", "Suspended"))
	if c := condition(res.Response, "Stalled"); c["status"] != "True" {
		t.Fatalf("suspended: Stalled %v, want True Suspended", c)
	}
	cron, err := k.Get(ctx, "/apis/batch/v1/namespaces/"+ns+"/cronjobs/nightly")
	if err != nil {
		t.Fatal(err)
	}
	tmpl := framework.Dig(cron, "spec", "jobTemplate").(map[string]any)
	manual := "nightly-manual"
	md, _ := tmpl["metadata"].(map[string]any)
	if _, err := k.Create(ctx, jobs, obj{"apiVersion": "batch/v1", "kind": "Job",
		"metadata": obj{"name": manual, "labels": md["labels"], "annotations": obj{"cronjob.kubernetes.io/instantiate": "manual"},
			"ownerReferences": []any{obj{"apiVersion": "batch/v1", "kind": "CronJob", "name": "nightly", "uid": framework.Dig(cron, "metadata", "uid"), "controller": true}}},
		"spec": tmpl["spec"]}); err != nil {
		t.Fatalf("creating a Job from the CronJob's template: %v", err)
	}
	since = time.Now()
	endRun(t, ns, manual, 0)
	waitJobCondition(t, ns, manual, "Complete")
	res = syncAnswer(t, ns, "nightly", since, 90*time.Second, "after a successful run: status.run.lastSucceeded", func(resp obj) error {
		if got := framework.Dig(resp, "status", "run", "lastSucceeded", "job"); got != manual {
			return fmt.Errorf("status.run.lastSucceeded.job %v", got)
		}
		return nil
	})
	if c := condition(res.Response, "Available"); c["status"] != "True" {
		t.Fatalf("after a successful run: Available %v, want True", c)
	}
	if got := framework.Dig(res.Response, "status", "run", "lastSucceeded", "job"); got != manual {
		t.Fatalf("status.run.lastSucceeded.job %v, want %s; run %s", got, manual, mustJSON(framework.Dig(res.Response, "status", "run")))
	}
	if got := framework.Dig(res.Response, "status", "run", "lastFailed", "job"); got != firstName {
		t.Fatalf("status.run.lastFailed.job %v, want %s", got, firstName)
	}
}

// reasonIs is a syncAnswer condition: the answer's condition typ has the
// reason.
func reasonIs(typ, reason string) func(resp obj) error {
	return func(resp obj) error {
		if got := conditionReason(resp, typ); got != reason {
			return fmt.Errorf("%s reason %q, want %q; status %s", typ, got, reason, mustJSON(framework.Dig(resp, "status")))
		}
		return nil
	}
}

// endRun waits for the one pod of Job job and ends it as a kubelet would
// with restartPolicy Never: the app container terminated with exit, the pod
// Succeeded (0) or Failed.
func endRun(t *testing.T, ns, job string, exit int) {
	t.Helper()
	pods := waitPods(t, ns, "batch.kubernetes.io/job-name="+job, 1)
	name := framework.Dig(pods[0], "metadata", "name").(string)
	now := time.Now().UTC().Format(time.RFC3339)
	phase, reason := "Failed", "Error"
	if exit == 0 {
		phase, reason = "Succeeded", "Completed"
	}
	patch := obj{"status": obj{"phase": phase, "startTime": now, "containerStatuses": []any{obj{
		"name": "app", "image": "example.invalid/report:1", "imageID": "", "ready": false, "restartCount": 0, "started": false,
		"state": obj{"terminated": obj{"exitCode": exit, "reason": reason, "startedAt": now, "finishedAt": now}},
	}}}}
	if _, err := suite.cluster.Kube.MergePatch(t.Context(), "/api/v1/namespaces/"+ns+"/pods/"+name+"/status", patch); err != nil {
		t.Fatalf("ending pod %s of Job %s: %v", name, job, err)
	}
}

// waitJobCondition waits for the Job controller to mark job with the
// condition typ (Complete, Failed).
func waitJobCondition(t *testing.T, ns, job, typ string) {
	t.Helper()
	err := framework.WaitUntil(60*time.Second, 250*time.Millisecond, fmt.Sprintf("Job %s %s", job, typ), func() (bool, error) {
		j, err := suite.cluster.Kube.Get(context.Background(), "/apis/batch/v1/namespaces/"+ns+"/jobs/"+job)
		if err != nil {
			return false, err
		}
		conds, _ := framework.Dig(j, "status", "conditions").([]any)
		for _, c := range conds {
			if framework.Dig(c, "type") == typ && framework.Dig(c, "status") == "True" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
