package status

import "github.com/stackdome/stackdome/schema"

// equalRun compares two run statuses as equalStatus does.
func equalRun(a, b *schema.RunStatus) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.LastScheduleTime.Equal(b.LastScheduleTime) &&
		equalJobRun(a.Last, b.Last) && equalJobRun(a.LastSucceeded, b.LastSucceeded) && equalJobRun(a.LastFailed, b.LastFailed)
}

func equalJobRun(a, b *schema.JobRun) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Job == b.Job && a.Result == b.Result && a.StartTime.Equal(b.StartTime) && a.FinishedAt.Equal(b.FinishedAt)
}
