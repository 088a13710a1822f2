package children

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/schema"
)

// jobSpec is the JobSpec of one run of tmpl with the spec's retries and
// deadline.
func jobSpec(spec schema.Spec, tmpl corev1.PodTemplateSpec) batchv1.JobSpec {
	js := batchv1.JobSpec{Template: tmpl}
	if j := spec.Job; j != nil {
		js.BackoffLimit, js.ActiveDeadlineSeconds = j.BackoffLimit, j.ActiveDeadlineSeconds
	}
	return js
}

// jobRevision is the revision of a type Job: the hash of its whole
// JobSpec (the pod template and the retries and deadline). A Job's pod
// template and most of its spec are immutable, so anything that changes
// the Job must change its name: the revision hashes all of it.
func jobRevision(spec schema.Spec, tmpl corev1.PodTemplateSpec) (string, error) {
	return revision(jobSpec(spec, tmpl))
}

// job is the Job of a type Job at revision rev. The chart registers Jobs
// with updateStrategy OnDelete: Metacontroller never updates one (an
// update of an immutable field would fail every sync), and a Job that
// must differ has another name anyway.
func job(name, rev string, spec schema.Spec, tmpl corev1.PodTemplateSpec) *batchv1.Job {
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: schema.KindJob},
		ObjectMeta: objectMeta(schema.JobName(name, rev), name),
		Spec:       jobSpec(spec, tmpl),
	}
}

// cronJob is the CronJob of a type CronJob, updated in place (a CronJob's
// spec, its job template included, is mutable; a change applies from the
// next run on). Its job template carries the instance labels, so that the
// Jobs it creates are related to the parent (the customize hook) and
// status can read them.
func cronJob(name string, spec schema.Spec, tmpl corev1.PodTemplateSpec) *batchv1.CronJob {
	c := spec.CronJob
	cj := &batchv1.CronJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: schema.KindCronJob},
		ObjectMeta: objectMeta(name, name),
		Spec: batchv1.CronJobSpec{
			Schedule:                   c.Schedule,
			TimeZone:                   c.TimeZone,
			ConcurrencyPolicy:          batchv1.ConcurrencyPolicy(c.ConcurrencyPolicy),
			StartingDeadlineSeconds:    c.StartingDeadlineSeconds,
			SuccessfulJobsHistoryLimit: c.SuccessfulJobsHistoryLimit,
			FailedJobsHistoryLimit:     c.FailedJobsHistoryLimit,
			Suspend:                    &c.Suspend,
			JobTemplate: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels(name)},
				Spec:       jobSpec(spec, tmpl),
			},
		},
	}
	return cj
}
