package status

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

func TestCronJobHealth(t *testing.T) {
	at := func(m int) *metav1.Time {
		v := metav1.NewTime(time.Date(2026, 11, 29, 3, m, 0, 0, time.UTC))
		return &v
	}
	run := func(name string, start int, result string, end int) observed.Run {
		r := observed.Run{Name: name, StartTime: at(start)}
		switch result {
		case "Complete":
			r.Complete, r.FinishedAt = true, at(end)
		case "Failed":
			r.Failed, r.FinishedAt, r.FailedReason = true, at(end), "DeadlineExceeded"
		}
		return r
	}
	spec := func(suspend bool) schema.Spec {
		return schema.Spec{Type: schema.TypeCronJob, Workloads: schema.Workloads{CronJob: &schema.CronJobSettings{Schedule: "@hourly", Suspend: suspend}}}
	}
	cj := &observed.Child{Kind: schema.KindCronJob}
	cj.Spec.JobTemplate.Spec.Template.Metadata.Annotations = map[string]string{schema.AnnotationRevision: "r1"}
	tests := map[string]struct {
		reason  string
		suspend bool
		runs    []observed.Run
		want    health
	}{
		"none": {reason: "no run yet is Available, NotYetRun",
			want: health{available: true, converged: true, reason: schema.ReasonNotYetRun, message: "no run has finished yet; runs are due at '@hourly'"}},
		"running": {reason: "a running first run is not a finished one", runs: []observed.Run{run("a", 0, "", 0)},
			want: health{available: true, converged: true, reason: schema.ReasonNotYetRun, message: "no run has finished yet; runs are due at '@hourly'"}},
		"last finished, not last started": {reason: "runs are ordered by start (Forbid aside, Allow overlaps): the run that finished last decides",
			runs: []observed.Run{run("a", 0, "Failed", 30), run("b", 10, "Complete", 20)},
			want: health{converged: true, reason: schema.ReasonJobFailed, message: "the last finished run, Job a failed (DeadlineExceeded)"}},
		"failed then succeeded": {runs: []observed.Run{run("a", 0, "Failed", 5), run("b", 10, "Complete", 20)},
			want: health{available: true, converged: true, reason: schema.ReasonLastRunSucceeded, message: "the last finished run, Job b, completed at 2026-11-29T03:20:00Z"}},
		"suspended": {reason: "Stalled, Available as the runs say", suspend: true, runs: []observed.Run{run("b", 10, "Complete", 20)},
			want: health{available: true, converged: true, stalled: true, reason: schema.ReasonSuspended,
				message: "cronJob.suspend is true: no new run starts until it is false; the last finished run, Job b, completed at 2026-11-29T03:20:00Z"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := &facts{name: "nightly", spec: spec(tc.suspend), specRev: "r1", workload: cj, runs: tc.runs}
			r := cronJobTable.decide(f)
			for _, a := range cronJobAmendments {
				r = a.amend(f, r)
			}
			h := r.health
			if diff := cmp.Diff(tc.want, h, cmp.AllowUnexported(health{})); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
