package status

import (
	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// jobTable is the state table of a type Job, read from the Job of its
// revision, row for row as docs/reference.md has it (table.go). A failed Job is
// Stalled: it never runs again until the spec changes.
var jobTable = chain{
	{"type Job: the Job of the revision missing (being created)", always, jobMissing},
	{"type Job: running", always, jobRunning},
	{"type Job: Complete", always, jobComplete},
	{"type Job: Failed (backoff limit, deadline)", always, jobFailed},
}

// cronJobTable is the state table of a type CronJob, read from its CronJob
// and the Jobs it made: Available while its last finished run succeeded (and
// before the first run finished), False naming the failed Job and its pod's
// crash. Converged once the CronJob has the revision's job template.
var cronJobTable = chain{
	{"type CronJob: the CronJob missing", always, cronJobMissing},
	{"type CronJob: no run finished yet", always, notYetRun},
	{"type CronJob: the last finished run succeeded", always, lastRunSucceeded},
	{"type CronJob: the last finished run failed", always, lastRunFailed},
}

// cronJobAmendments amend the row cronJobTable decided.
var cronJobAmendments = []amendment{
	{"type CronJob: cronJob.suspend", suspended},
}

// decideRun is the state table of the run-to-completion types (docs/design.md,
// "Jobs and CronJobs"). There is no port to verify: the verifier is never
// asked, and nothing asks for a resync (but the settle time of a missing
// child), since every fact read is an observed object whose change triggers
// a sync. It performs no I/O. A child Metacontroller could not create (a
// quota on count/jobs.batch) reads ChildNotCreated past the settle time, as
// for the serving types.
func decideRun(in *Input) Outcome {
	p, spec, obs, now := in.Parent, in.Spec, in.Observed, in.Now
	f := &facts{cfg: in.Config, name: p.Metadata.Name, namespace: p.Metadata.Namespace, spec: spec, specRev: in.Revision,
		now: now, workload: obs.Workload, all: obs.Pods, runs: obs.Runs,
		missing: obs.Missing, missingSince: childrenMissingSince(p.Status.ChildrenMissingSince, obs.Missing, now)}
	var r row
	var run *schema.RunStatus
	if spec.Type == schema.TypeJob {
		r, run = jobTable.decide(f), jobRunStatus(f)
	} else {
		r, run = cronJobTable.decide(f), cronJobRunStatus(f)
		for _, a := range cronJobAmendments {
			r = a.amend(f, r)
		}
	}
	r = childrenSeen(f, r)
	cs := in.stamper()
	st := schema.Status{
		ObservedGeneration:   p.Metadata.Generation,
		Revision:             in.Revision,
		Conditions:           cs.health(r.health),
		LastFailureDetails:   observedAt(r.details, p.Status.LastFailureDetails, now),
		ChildrenMissingSince: f.missingSince,
		Run:                  run,
	}
	if c, ok := configCondition(p.Metadata.Namespace, p.Metadata.Name, spec, obs.Config); ok {
		st.Conditions = append(st.Conditions, cs.condition(c))
	}
	return Outcome{Status: bound(st), Resync: r.resyncIn}
}

// theJob is the Job of the spec revision, nil when it is not observed.
func (f *facts) theJob() *observed.Run {
	jn := schema.JobName(f.name, f.specRev)
	var cur *observed.Run
	for i := range f.runs {
		if f.runs[i].Name == jn {
			cur = &f.runs[i]
		}
	}
	return cur
}

// jobRunStatus is a type Job's status.run: its Job's.
func jobRunStatus(f *facts) *schema.RunStatus {
	cur := f.theJob()
	if cur == nil {
		return nil
	}
	jr := jobRun(*cur)
	run := &schema.RunStatus{LastScheduleTime: cur.StartTime, Last: jr}
	switch {
	case cur.Complete:
		run.LastSucceeded = jr
	case cur.Failed:
		run.LastFailed = jr
	}
	return run
}

func jobMissing(f *facts) (row, bool) {
	if f.theJob() != nil {
		return row{}, false
	}
	jn := schema.JobName(f.name, f.specRev)
	return row{health: health{reason: schema.ReasonProgressing,
		message: "Job " + jn + " of revision " + f.specRev + " is being created"}}, true
}

func jobRunning(f *facts) (row, bool) {
	cur := f.theJob()
	if cur.Complete || cur.Failed {
		return row{}, false
	}
	crash := runCrash(f.all, cur.Name, f.specRev)
	msg := "Job " + cur.Name + " is running"
	if len(crash) > 0 {
		msg += "; an attempt failed: " + crash[0].Message
	}
	return row{health: health{reason: schema.ReasonRunning, message: msg}, details: crash}, true
}

func jobComplete(f *facts) (row, bool) {
	cur := f.theJob()
	if !cur.Complete {
		return row{}, false
	}
	return row{health: health{available: true, converged: true, reason: schema.ReasonComplete,
		message: "Job " + cur.Name + " completed" + finishedAt(cur.FinishedAt) + "; it runs again when the spec changes"}}, true
}

func jobFailed(f *facts) (row, bool) {
	cur := f.theJob()
	crash := runCrash(f.all, cur.Name, f.specRev)
	return row{health: health{converged: true, stalled: true, reason: schema.ReasonJobFailed,
		message: failedMessage("Job "+cur.Name, *cur, crash) + "; it runs again when the spec changes (a new image, command or env)"},
		details: crash}, true
}

// cronJobRunStatus is a type CronJob's status.run: its last schedule and
// the newest run of each result; nil before the CronJob and its first run.
func cronJobRunStatus(f *facts) *schema.RunStatus {
	cj := f.workload
	if cj == nil {
		return nil
	}
	run := &schema.RunStatus{LastScheduleTime: cj.Status.LastScheduleTime}
	for i := range f.runs {
		r := &f.runs[i]
		jr := jobRun(*r)
		run.Last = jr
		if r.Complete && (run.LastSucceeded == nil || !r.FinishedAt.Before(run.LastSucceeded.FinishedAt)) {
			run.LastSucceeded = jr
		}
		if r.Failed && (run.LastFailed == nil || !r.FinishedAt.Before(run.LastFailed.FinishedAt)) {
			run.LastFailed = jr
		}
	}
	if run.LastScheduleTime == nil && run.Last == nil {
		return nil
	}
	return run
}

// lastFinished is the run of the CronJob that finished last, nil before
// the first finished.
func (f *facts) lastFinished() *observed.Run {
	var last *observed.Run
	for i := range f.runs {
		r := &f.runs[i]
		if r.Finished() && (last == nil || !r.FinishedAt.Before(last.FinishedAt)) {
			last = r
		}
	}
	return last
}

// cronJobConverged: the CronJob has the revision's job template.
func cronJobConverged(f *facts) bool {
	return f.workload.Spec.JobTemplate.Spec.Template.Metadata.Annotations[schema.AnnotationRevision] == f.specRev
}

func cronJobMissing(f *facts) (row, bool) {
	if f.workload != nil {
		return row{}, false
	}
	return row{health: health{reason: schema.ReasonProgressing, message: "CronJob " + f.name + " is being created"}}, true
}

func notYetRun(f *facts) (row, bool) {
	if f.lastFinished() != nil {
		return row{}, false
	}
	return row{health: health{available: true, converged: cronJobConverged(f), reason: schema.ReasonNotYetRun,
		message: "no run has finished yet; runs are due at " + schedule(f.spec)}}, true
}

func lastRunSucceeded(f *facts) (row, bool) {
	last := f.lastFinished()
	if last.Failed {
		return row{}, false
	}
	return row{health: health{available: true, converged: cronJobConverged(f), reason: schema.ReasonLastRunSucceeded,
		message: "the last finished run, Job " + last.Name + ", completed" + finishedAt(last.FinishedAt)}}, true
}

func lastRunFailed(f *facts) (row, bool) {
	last := f.lastFinished()
	details := runCrash(f.all, last.Name, f.specRev)
	return row{health: health{converged: cronJobConverged(f), reason: schema.ReasonJobFailed,
		message: failedMessage("the last finished run, Job "+last.Name, *last, details)}, details: details}, true
}

// suspended amends the row of an observed CronJob while cronJob.suspend is
// set: Stalled, reason Suspended, Available as the runs say.
func suspended(f *facts, r row) row {
	if f.workload == nil || !f.spec.CronJob.Suspend {
		return r
	}
	r.stalled, r.reason = true, schema.ReasonSuspended
	r.message = "cronJob.suspend is true: no new run starts until it is false; " + r.message
	return r
}

// schedule is the spec's schedule as a message says it.
func schedule(spec schema.Spec) string {
	s := "'" + spec.CronJob.Schedule + "'"
	if tz := spec.CronJob.TimeZone; tz != nil {
		s += " (" + *tz + ")"
	}
	return s
}
