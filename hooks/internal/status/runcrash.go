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

// What a run says of itself: its result as status.run keeps it, its
// failure and the crash of its pod.

// jobRun is r as status.run keeps a Job.
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

// finishedAt says " at <t>" when t is known.
func finishedAt(t *metav1.Time) string {
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
