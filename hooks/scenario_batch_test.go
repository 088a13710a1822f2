package hooks

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/internal/mcrequest"
	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/schema"
)

// A batch scenario is a type Job or CronJob over time, as data
// (testdata/scenarios/*.batch.json): each step is one sync with the Job or
// CronJob Metacontroller would send (the one the step's spec asks for, or
// the one of the revision before), the Jobs a CronJob made with the exit of
// their pods, and the status expected. The status each step returns is fed
// to the next as the parent's, as Metacontroller writes it.
type batchScenario struct {
	About string          `json:"about"`
	Name  string          `json:"name"`
	Spec  json.RawMessage `json:"spec"`
	Steps []batchStep     `json:"steps"`
}

type batchStep struct {
	At   duration        `json:"at"`
	Note string          `json:"note"`
	Spec json.RawMessage `json:"spec"` // a new spec from this step on
	// Labels are the parent's metadata labels from this step on: a
	// metadata-only change, which the API server does not count as a
	// new generation.
	Labels map[string]string `json:"labels"`
	// Workload is the observed Job (type Job) or CronJob: missing, current
	// (the one this step's spec asks for), previous (type Job: the Job of
	// the revision before, not yet replaced).
	Workload string `json:"workload"`
	// Job is the observed Job's run (type Job).
	Job *batchRun `json:"job"`
	// Runs are the Jobs the CronJob made (type CronJob), related.
	Runs []batchRun `json:"runs"`
	// LastScheduleTime is the CronJob's status.lastScheduleTime, an offset.
	LastScheduleTime string    `json:"lastScheduleTime"`
	Want             batchWant `json:"want"`
}

// batchRun is one Job and its one pod.
type batchRun struct {
	Name     string   `json:"name"`   // a CronJob's run; a Job's is its child's name
	Result   string   `json:"result"` // Running | Complete | Failed
	Start    duration `json:"start"`
	End      duration `json:"end"`
	ExitCode *int32   `json:"exitCode"` // the app container's; none: still running
}

// batchWant is what a step asserts of the answer. In Children, <rev>
// stands for the step's spec revision.
type batchWant struct {
	Available string   `json:"available"` // "True Complete"
	Stalled   string   `json:"stalled"`   // "False", or "True <reason>"
	Children  []string `json:"children"`  // "Job/<name>-<rev>"
	Details   []string `json:"details"`   // "<container> <reason> <exit code>"
	Run       string   `json:"run"`       // "last=<job>:<result> succeeded=<job> failed=<job>"
}

func TestBatchScenarios(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "testdata", "scenarios", "*.batch.json"))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".batch.json"), func(t *testing.T) {
			var sc batchScenario
			require.NoError(t, json.Unmarshal(readFile(t, path), &sc))
			requireScenarioGolden(t, path, sc.About, runBatchScenario(t, sc))
		})
	}
}

func runBatchScenario(t *testing.T, sc batchScenario) []goldenStep {
	cfg := DefaultConfig()
	cfg.NoErrorService = true
	spec, labels, generation := sc.Spec, map[string]string{}, int64(1)
	var status any = map[string]any{}
	var prevWorkload, curWorkload mcrequest.Object
	var steps []goldenStep
	for i, st := range sc.Steps {
		name := fmt.Sprintf("step %d at %s (%s)", i, time.Duration(st.At), st.Note)
		now := testNow.Add(time.Duration(st.At))
		if st.Spec != nil {
			spec = st.Spec
			generation++
		}
		if st.Labels != nil {
			labels = st.Labels
		}
		parent := stackResource(t, mcrequest.StackResource{Name: sc.Name, Namespace: "scenario",
			UID: "6d1c0f4e-0000-4000-8000-000000000002", Generation: generation, Labels: labels, Spec: spec, Status: status})
		w := mcrequest.Find(firstAnswer(t, cfg, parent, now), schema.KindJob, schema.KindCronJob)
		require.NotNil(t, w, name)
		kind := mcrequest.Str(w, "kind")
		rev := mcrequest.Revision(w)
		if rev != mcrequest.Revision(curWorkload) {
			prevWorkload, curWorkload = curWorkload, w
		}

		var children, cluster []mcrequest.Object
		var observed mcrequest.Object
		switch st.Workload {
		case "current":
			observed = mcrequest.Clone(w)
		case "previous":
			require.NotNil(t, prevWorkload, "%s: workload previous needs an earlier revision", name)
			observed = mcrequest.Clone(prevWorkload)
		}
		if observed != nil {
			if kind == schema.KindCronJob {
				observed["status"] = map[string]any{}
				if st.LastScheduleTime != "" {
					d, err := time.ParseDuration(st.LastScheduleTime)
					require.NoError(t, err)
					observed["status"] = map[string]any{"lastScheduleTime": testNow.Add(d).Format(time.RFC3339)}
				}
			} else if st.Job != nil {
				observed["status"] = batchJobStatus(*st.Job)
				cluster = append(cluster, batchPod(mcrequest.Name(observed), observed, *st.Job))
			}
			st, _ := observed["status"].(map[string]any)
			children = append(children, mcrequest.Observed(observed, parent, 0, st))
		}
		if kind == schema.KindCronJob {
			for _, r := range st.Runs {
				job := batchJob(w, r)
				cluster = append(cluster, job, batchPod(r.Name, w, r))
			}
		}

		req := standIn(t, cfg, parent, children, cluster)
		resp, _, err := cfg.Sync(req, nil, now)
		require.NoError(t, err, name)
		got := summarizeBatch(t, resp, rev)
		if diff := cmp.Diff(st.Want, got); diff != "" {
			t.Fatalf("%s: answer differs (-want +got):\n%s\nstatus: %s", name, diff, indent(t, resp.Status))
		}
		requireFixpointWith(t, cfg, req, resp, nil, now)
		status = roundTrip(t, resp.Status)
		steps = append(steps, goldenStep{At: time.Duration(st.At).String(), Note: st.Note,
			Request: map[string]any{"parent": roundTrip(t, mcrequest.Raw(parent))}, Response: resp})
	}
	return steps
}

// batchJobStatus is a Job's status as the Job controller writes it.
func batchJobStatus(r batchRun) map[string]any {
	start := testNow.Add(time.Duration(r.Start)).Format(time.RFC3339)
	end := testNow.Add(time.Duration(r.End)).Format(time.RFC3339)
	st := map[string]any{"startTime": start}
	switch r.Result {
	case "Complete":
		st["succeeded"], st["completionTime"] = 1, end
		st["conditions"] = []any{map[string]any{"type": "Complete", "status": "True", "reason": "CompletionsReached", "lastTransitionTime": end}}
	case "Failed":
		st["failed"] = 1
		st["conditions"] = []any{map[string]any{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
			"message": "Job has reached the specified backoff limit", "lastTransitionTime": end}}
	default:
		st["active"] = 1
	}
	return st
}

// batchJob is run r of CronJob cj as the CronJob controller made it:
// labelled as its job template, with r's status.
func batchJob(cj mcrequest.Object, r batchRun) mcrequest.Object {
	return mcrequest.Object{
		"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"name": r.Name, "namespace": "scenario",
			"labels":            mcrequest.Clone(mcrequest.Lookup(cj, "spec", "jobTemplate", "metadata", "labels")),
			"creationTimestamp": testNow.Add(time.Duration(r.Start)).Format(time.RFC3339)},
		"status": batchJobStatus(r),
	}
}

// batchPod is the one pod of Job jobName of workload w (the Job itself, or
// the CronJob that made it), labelled as the Job controller labels it (the
// pod template's labels and job-name), with the app container's exit.
func batchPod(jobName string, w mcrequest.Object, r batchRun) mcrequest.Object {
	state, phase := map[string]any{"running": map[string]any{"startedAt": testNow.Format(time.RFC3339)}}, "Running"
	if r.ExitCode != nil {
		phase = "Succeeded"
		reason := "Completed"
		if *r.ExitCode != 0 {
			phase, reason = "Failed", "Error"
		}
		state = map[string]any{"terminated": map[string]any{"exitCode": *r.ExitCode, "reason": reason}}
	}
	labels := map[string]any{schema.LabelJobName: jobName}
	for k, v := range mcrequest.Lookup(mcrequest.PodTemplate(w), "metadata", "labels") {
		labels[k] = v
	}
	name := jobName + "-p0d00"
	return mcrequest.Object{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": name, "namespace": "scenario", "labels": labels,
			"creationTimestamp": testNow.Add(time.Duration(r.Start)).Format(time.RFC3339)},
		"status": map[string]any{"phase": phase, "containerStatuses": []any{map[string]any{"name": "app", "ready": false, "state": state}}},
	}
}

func summarizeBatch(t *testing.T, resp *metacontroller.SyncResponse, rev string) batchWant {
	st := resp.Status.(schema.Status)
	var s batchWant
	for _, c := range st.Conditions {
		switch schema.ConditionType(c.Type) {
		case schema.CondAvailable:
			s.Available = string(c.Status) + " " + c.Reason
		case schema.CondStalled:
			s.Stalled = string(c.Status)
			if c.Status == "True" {
				s.Stalled += " " + c.Reason
			}
		}
	}
	for _, m := range mcrequest.Objects(resp.Children) {
		s.Children = append(s.Children, strings.ReplaceAll(mcrequest.KindName(m), rev, "<rev>"))
	}
	for _, d := range st.LastFailureDetails {
		e := d.Container + " " + d.Reason
		if d.ExitCode != nil {
			e += fmt.Sprintf(" %d", *d.ExitCode)
		}
		s.Details = append(s.Details, e)
	}
	if r := st.Run; r != nil {
		var parts []string
		if r.Last != nil {
			parts = append(parts, "last="+strings.ReplaceAll(r.Last.Job, rev, "<rev>")+":"+string(r.Last.Result))
		}
		if r.LastSucceeded != nil {
			parts = append(parts, "succeeded="+strings.ReplaceAll(r.LastSucceeded.Job, rev, "<rev>"))
		}
		if r.LastFailed != nil {
			parts = append(parts, "failed="+strings.ReplaceAll(r.LastFailed.Job, rev, "<rev>"))
		}
		s.Run = strings.Join(parts, " ")
	}
	return s
}
