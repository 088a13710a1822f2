package schema

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The workload types that run to completion: a Job runs the app once per
// spec revision, a CronJob on a schedule. Neither serves: they take no
// ports, hosts, routes, autoscaling or replicas.
const (
	TypeJob     WorkloadType = "Job"
	TypeCronJob WorkloadType = "CronJob"
)

// The kinds the run-to-completion types make (Spec.WorkloadKind).
const (
	KindJob     = "Job"
	KindCronJob = "CronJob"
)

// JobName is the name of the Job of a type Job at spec revision rev:
// <name>-<revision>, at most 51+1+10 characters. A changed spec or image
// is a new revision and so a new Job, which runs; the Job of the revision
// before, no longer returned, is deleted by Metacontroller. An unchanged
// spec returns the same Job, unchanged, on every sync: a finished Job is
// kept, never rerun, until the spec changes.
func JobName(name, rev string) string { return name + "-" + rev }

// LabelJobName is the label the Job controller puts on the pods of a Job,
// naming it.
const LabelJobName = "batch.kubernetes.io/job-name"

// Reasons of a Job's or CronJob's conditions.
const (
	ReasonRunning          Reason = "Running"          // the Job of the revision runs
	ReasonComplete         Reason = "Complete"         // the Job of the revision completed
	ReasonJobFailed        Reason = "JobFailed"        // the Job (a CronJob: its last finished run) failed
	ReasonLastRunSucceeded Reason = "LastRunSucceeded" // a CronJob's last finished run completed
	ReasonNotYetRun        Reason = "NotYetRun"        // a CronJob no run of which has finished yet
	ReasonSuspended        Reason = "Suspended"        // a CronJob with cronJob.suspend: no new run starts
)

// RunsToCompletion reports whether the spec's workload runs to completion
// (type Job or CronJob) rather than serving.
func (s Spec) RunsToCompletion() bool {
	return s.Type == TypeJob || s.Type == TypeCronJob
}

// Workloads are the spec fields of the run-to-completion types and of the
// sidecars, inlined into Spec.
type Workloads struct {
	// Job says how each run of a Job or CronJob ends: retries and a
	// deadline. For type Job and CronJob only.
	// +optional
	Job *JobSettings `json:"job,omitempty"`

	// CronJob is the schedule of a type CronJob, which it requires.
	// +optional
	CronJob *CronJobSettings `json:"cronJob,omitempty"`

	// Sidecars run beside the app container in every pod, as native
	// sidecars (init containers with restartPolicy Always, on by default
	// from Kubernetes 1.29, the chart's floor is 1.30): they start before
	// the app, stop after it, and do not keep a Job's pod from completing.
	// They share the pod's settings (identity, pod security context,
	// placement) and get the restricted container defaults. A sidecar's
	// port is declared in spec.ports with container set to its name. The
	// app container's readiness alone decides serving; a crash-looping
	// sidecar reads CrashLooping naming it.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="self.all(c, self.exists_one(d, d.name == c.name))",message="sidecar names must be unique"
	// +listType=atomic
	// +optional
	Sidecars []Sidecar `json:"sidecars,omitempty"`
}

// JobSettings are a Job's retries and deadline.
type JobSettings struct {
	// BackoffLimit is how many failed pods a run retries before it is
	// Failed; the Job controller's 6 when unset.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	BackoffLimit *int32 `json:"backoffLimit,omitempty"`
	// ActiveDeadlineSeconds fails a run still going this long after it
	// started, retries included.
	// +kubebuilder:validation:Minimum=1
	// +optional
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`
}

// ConcurrencyPolicy says what a CronJob does when a run is due while the
// last one still runs.
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

// CronJobSettings are the schedule of a type CronJob, with the fields of a
// Kubernetes CronJob.
//
// +kubebuilder:validation:XValidation:rule="!self.schedule.contains('TZ')",fieldPath=".schedule",message="cronJob.schedule cannot hold TZ= or CRON_TZ=: set cronJob.timeZone instead (the API server refuses TZ in a new CronJob's schedule)"
type CronJobSettings struct {
	// Schedule is a cron expression of five fields (minute hour
	// day-of-month month day-of-week) or a descriptor (@hourly, @daily,
	// @every 1h30m ...), as the CronJob controller parses it.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:XValidation:rule="self.startsWith('@') || self.matches('^(CRON_TZ=[^ ]+ +|TZ=[^ ]+ +)?[^ ]+( +[^ ]+){4}$')",message="cronJob.schedule must be five fields (minute hour day-of-month month day-of-week, e.g. '0 3 * * *') or a descriptor such as @daily"
	Schedule string `json:"schedule"`
	// TimeZone is the IANA time zone the schedule is read in (e.g.
	// Europe/Berlin); kube-controller-manager's when unset.
	// At most 32 characters, the longest IANA name
	// (America/Argentina/ComodRivadavia).
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[A-Za-z][A-Za-z0-9_+/-]*$`
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`
	// ConcurrencyPolicy is Allow (the default), Forbid (skip a run while
	// one runs) or Replace (stop the running one).
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`
	// StartingDeadlineSeconds: a run that could not start this long after
	// it was due is skipped and counted as missed.
	// +kubebuilder:validation:Minimum=1
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`
	// SuccessfulJobsHistoryLimit is how many finished successful Jobs are
	// kept; 3 when unset.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	SuccessfulJobsHistoryLimit *int32 `json:"successfulJobsHistoryLimit,omitempty"`
	// FailedJobsHistoryLimit is how many failed Jobs are kept; 1 when
	// unset. Status reads the last failed run from them: 0 leaves it
	// unread once the controller deletes the Job.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +optional
	FailedJobsHistoryLimit *int32 `json:"failedJobsHistoryLimit,omitempty"`
	// Suspend stops new runs; a running one goes on. Status reads Stalled
	// Suspended.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
}

// Sidecar is a container beside the app in every pod.
type Sidecar struct {
	// Name of the container: a DNS label, not app or migrate.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +kubebuilder:validation:XValidation:rule="!(self in ['app', 'migrate'])",message="a sidecar cannot be named app or migrate: those are the app container and the migration"
	Name string `json:"name"`
	// Image of the sidecar.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	// +kubebuilder:validation:Pattern=`\S`
	Image string `json:"image"`
	// Command overrides the image's entrypoint.
	// +listType=atomic
	// +optional
	Command []string `json:"command,omitempty"`
	// Args overrides the image's arguments.
	// +listType=atomic
	// +optional
	Args []string `json:"args,omitempty"`
	// Env is the sidecar's environment; a valueFrom naming a ConfigMap or
	// Secret is followed like the app's.
	// +listType=atomic
	// +optional
	Env []EnvVar `json:"env,omitempty"`
	// EnvFrom adds every key of ConfigMaps or Secrets to the sidecar's
	// environment, followed like the app's.
	// +listType=atomic
	// +optional
	EnvFrom []EnvFromSource `json:"envFrom,omitempty"`
	// Files names entries of spec.files mounted into the sidecar too, at
	// the same mountPath, read-only.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=57
	// +kubebuilder:validation:XValidation:rule="self.all(n, self.exists_one(m, m == n))",message="a sidecar's files must be unique: each is one mount"
	// +listType=atomic
	// +optional
	Files []string `json:"files,omitempty"`
	// Resources are the sidecar's requests and limits.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
	// SecurityContext relaxes, field by field, the sidecar's security
	// context, which by default meets Pod Security "restricted" like the
	// app's.
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
	// HealthChecks are the sidecar's probes; none by default. Its
	// readiness does not decide serving.
	// +optional
	HealthChecks *HealthChecks `json:"healthChecks,omitempty"`
}

// RunStatus is what the runs of a Job or CronJob say: when one was last
// due, and the last that finished, succeeded and failed. Every time in it
// is read from the Jobs and the CronJob, never from stackdome's clock.
type RunStatus struct {
	// LastScheduleTime is when the CronJob last started a run (the
	// CronJob's status.lastScheduleTime), or when the Job started.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// Last is the newest run, finished or not.
	// +optional
	Last *JobRun `json:"last,omitempty"`
	// LastSucceeded is the newest run that completed.
	// +optional
	LastSucceeded *JobRun `json:"lastSucceeded,omitempty"`
	// LastFailed is the newest run that failed.
	// +optional
	LastFailed *JobRun `json:"lastFailed,omitempty"`
}

// RunResult is how a run stands.
// +kubebuilder:validation:Enum=Running;Succeeded;Failed
type RunResult string

// Run results.
const (
	RunRunning   RunResult = "Running"
	RunSucceeded RunResult = "Succeeded"
	RunFailed    RunResult = "Failed"
)

// JobRun is one Job.
type JobRun struct {
	// Job is the Job's name.
	Job string `json:"job"`
	// Result is Running, Succeeded or Failed.
	Result RunResult `json:"result"`
	// StartTime is when the Job started.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// FinishedAt is when it completed or failed.
	// +optional
	FinishedAt *metav1.Time `json:"finishedAt,omitempty"`
}
