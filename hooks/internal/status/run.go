package status

import (
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// decideRun is the state table of the run-to-completion types (docs/design.md,
// "Jobs and CronJobs"): a type Job by the Job of its revision, a type
// CronJob by its CronJob and the Jobs it made. There is no port to verify:
// the verifier is never asked, and nothing asks for a resync (but the
// settle time of a missing child), since every fact read is an observed
// object whose change triggers a sync. It
// performs no I/O. A child Metacontroller could not create (a quota on
// count/jobs.batch) reads ChildNotCreated past the settle time, as for the
// serving types.
func decideRun(in *Input) Outcome {
	p, spec, rev, obs, now := in.Parent, in.Spec, in.Revision, in.Observed, in.Now
	var h health
	var details []schema.FailureDetail
	var run *schema.RunStatus
	if spec.Type == schema.TypeJob {
		h, details, run = jobHealth(p.Metadata.Name, rev, obs)
	} else {
		h, details, run = cronJobHealth(p.Metadata.Name, spec, rev, obs)
	}
	f := &facts{cfg: in.Config, name: p.Metadata.Name, namespace: p.Metadata.Namespace, spec: spec, specRev: rev, now: now,
		missing: obs.Missing, missingSince: childrenMissingSince(p.Status.ChildrenMissingSince, obs.Missing, now)}
	r := childrenSeen(f, row{health: h})
	cs := in.stamper()
	st := schema.Status{
		ObservedGeneration:   p.Metadata.Generation,
		Revision:             rev,
		Conditions:           cs.health(r.health),
		LastFailureDetails:   observedAt(details, p.Status.LastFailureDetails, now),
		ChildrenMissingSince: f.missingSince,
		Run:                  run,
	}
	if c, ok := configCondition(p.Metadata.Namespace, p.Metadata.Name, spec, obs.Config); ok {
		st.Conditions = append(st.Conditions, cs.condition(c))
	}
	return Outcome{Status: bound(st), Resync: r.resyncIn}
}

// jobHealth is a type Job's row: the Job of the revision is missing
// (being created), running, complete or failed. A failed Job is Stalled:
// it never runs again until the spec changes.
func jobHealth(name, rev string, obs observed.Observed) (health, []schema.FailureDetail, *schema.RunStatus) {
	jn := schema.JobName(name, rev)
	var cur *observed.Run
	for i := range obs.Runs {
		if obs.Runs[i].Name == jn {
			cur = &obs.Runs[i]
		}
	}
	if cur == nil {
		return health{reason: schema.ReasonProgressing, message: "Job " + jn + " of revision " + rev + " is being created"}, nil, nil
	}
	jr := jobRun(*cur)
	run := &schema.RunStatus{LastScheduleTime: cur.StartTime, Last: jr}
	crash := runCrash(obs.Pods, jn, rev)
	switch {
	case cur.Complete:
		run.LastSucceeded = jr
		return health{available: true, converged: true, reason: schema.ReasonComplete,
			message: "Job " + jn + " completed" + at(cur.FinishedAt) + "; it runs again when the spec changes"}, nil, run
	case cur.Failed:
		run.LastFailed = jr
		return health{converged: true, stalled: true, reason: schema.ReasonJobFailed,
			message: failedMessage("Job "+jn, *cur, crash) + "; it runs again when the spec changes (a new image, command or env)"}, crash, run
	}
	msg := "Job " + jn + " is running"
	if len(crash) > 0 {
		msg += "; an attempt failed: " + crash[0].Message
	}
	return health{reason: schema.ReasonRunning, message: msg}, crash, run
}

// cronJobHealth is a type CronJob's row: Available while its last finished
// run succeeded (and before the first run finished, NotYetRun), False
// naming the failed Job and its pod's crash; Stalled Suspended while
// cronJob.suspend is set. Converged once the CronJob has the revision's
// job template.
func cronJobHealth(name string, spec schema.Spec, rev string, obs observed.Observed) (health, []schema.FailureDetail, *schema.RunStatus) {
	cj := obs.Workload
	if cj == nil {
		return health{reason: schema.ReasonProgressing, message: "CronJob " + name + " is being created"}, nil, nil
	}
	run := &schema.RunStatus{LastScheduleTime: cj.Status.LastScheduleTime}
	var lastFinished *observed.Run
	for i := range obs.Runs {
		r := &obs.Runs[i]
		jr := jobRun(*r)
		run.Last = jr
		if !r.Finished() {
			continue
		}
		if r.Complete && (run.LastSucceeded == nil || !r.FinishedAt.Before(run.LastSucceeded.FinishedAt)) {
			run.LastSucceeded = jr
		}
		if r.Failed && (run.LastFailed == nil || !r.FinishedAt.Before(run.LastFailed.FinishedAt)) {
			run.LastFailed = jr
		}
		if lastFinished == nil || !r.FinishedAt.Before(lastFinished.FinishedAt) {
			lastFinished = r
		}
	}
	h := health{converged: cj.Spec.JobTemplate.Spec.Template.Metadata.Annotations[schema.AnnotationRevision] == rev}
	var details []schema.FailureDetail
	switch {
	case lastFinished == nil:
		h.available, h.reason = true, schema.ReasonNotYetRun
		h.message = "no run has finished yet; runs are due at " + schedule(spec)
	case lastFinished.Failed:
		details = runCrash(obs.Pods, lastFinished.Name, rev)
		h.reason = schema.ReasonJobFailed
		h.message = failedMessage("the last finished run, Job "+lastFinished.Name, *lastFinished, details)
	default:
		h.available, h.reason = true, schema.ReasonLastRunSucceeded
		h.message = "the last finished run, Job " + lastFinished.Name + ", completed" + at(lastFinished.FinishedAt)
	}
	if spec.CronJob.Suspend {
		h.stalled, h.reason = true, schema.ReasonSuspended
		h.message = "cronJob.suspend is true: no new run starts until it is false; " + h.message
	}
	if run.LastScheduleTime == nil && run.Last == nil {
		run = nil
	}
	return h, details, run
}

// schedule is the spec's schedule as a message says it.
func schedule(spec schema.Spec) string {
	s := "'" + spec.CronJob.Schedule + "'"
	if tz := spec.CronJob.TimeZone; tz != nil {
		s += " (" + *tz + ")"
	}
	return s
}

func jobRun(r observed.Run) *schema.JobRun {
	jr := &schema.JobRun{Job: r.Name, Result: schema.RunRunning, StartTime: r.StartTime, FinishedAt: r.FinishedAt}
	switch {
	case r.Complete:
		jr.Result = schema.RunSucceeded
	case r.Failed:
		jr.Result = schema.RunFailed
	}
	return jr
}

func at(t *metav1.Time) string {
	if t == nil {
		return ""
	}
	return " at " + t.UTC().Format(time.RFC3339)
}

// failedMessage says which Job failed, why the Job controller gave up, and
// the crash of its pod.
func failedMessage(what string, r observed.Run, crash []schema.FailureDetail) string {
	msg := what + " failed"
	if r.FailedReason != "" {
		msg += " (" + r.FailedReason
		if r.FailedMessage != "" {
			msg += ": " + strings.TrimSuffix(r.FailedMessage, ".")
		}
		msg += ")"
	}
	if len(crash) > 0 {
		msg += ": " + crash[0].Message
	}
	return msg
}

// runCrash is the crash of the newest pod of Job job that shows one: the
// app container first (its exit code is the run's), then the sidecars and
// the migration; a run's pod is never restarted (restartPolicy Never), so a
// termination is the run's end, not a restart.
func runCrash(pods []observed.Related, job, rev string) []schema.FailureDetail {
	var mine []observed.Related
	for _, p := range pods {
		if p.Metadata.Labels[schema.LabelJobName] == job || p.Metadata.Labels["job-name"] == job {
			mine = append(mine, p)
		}
	}
	sort.SliceStable(mine, func(i, j int) bool {
		a, b := mine[i].Metadata.CreationTimestamp, mine[j].Metadata.CreationTimestamp
		if !a.Equal(&b) {
			return b.Before(&a)
		}
		return mine[i].Metadata.Name > mine[j].Metadata.Name
	})
	for _, p := range mine {
		for _, statuses := range [][]corev1.ContainerStatus{p.Status.ContainerStatuses, p.Status.InitContainerStatuses} {
			for _, cs := range statuses {
				if d, ok := exitOf(p.Metadata.Name, cs); ok {
					d.Revision = rev
					return []schema.FailureDetail{d}
				}
			}
		}
	}
	return nil
}

// exitOf reads one container status of a run's pod: a non-zero exit (or
// OOMKill) as it ended, else what crashOf reads (an image that cannot be
// pulled, a crash-looping sidecar).
func exitOf(podName string, cs corev1.ContainerStatus) (schema.FailureDetail, bool) {
	if t := cs.State.Terminated; t != nil && (t.ExitCode != 0 || t.Reason == "OOMKilled") {
		return schema.FailureDetail{Type: schema.RuntimeCrash, Container: cs.Name, Reason: terminationReason(t), ExitCode: new(t.ExitCode),
			Message: fmt.Sprintf("container %s of pod %s exited with code %d (%s)", cs.Name, podName, t.ExitCode, terminationReason(t))}, true
	}
	return crashOf(podName, cs)
}
