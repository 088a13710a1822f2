package schema

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestValidateWorkloads(t *testing.T) {
	cron := func(c CronJobSettings) *CronJobSettings { return &c }
	tz := func(s string) *string { return &s }
	tests := map[string]struct {
		reason string
		spec   Spec
		want   field.ErrorList
	}{
		"job": {reason: "a Job needs an image alone", spec: Spec{Type: TypeJob, Image: "x", Workloads: Workloads{Job: &JobSettings{BackoffLimit: new(int32(2))}}}},
		"cronjob": {reason: "a descriptor and a zone the API server knows",
			spec: Spec{Type: TypeCronJob, Image: "x", Workloads: Workloads{CronJob: cron(CronJobSettings{Schedule: "@daily", TimeZone: tz("Europe/Berlin"), ConcurrencyPolicy: "Forbid"})}}},
		"job with ports": {reason: "port-only fields are refused, each by name; a default replicas and errorPages are not the user's",
			spec: Default(Spec{Type: TypeJob, Image: "x", Host: "a.example.com", Ports: []Port{{Name: "http", Port: 80}}, TLS: &TLS{}, Autoscaling: &Autoscaling{MaxReplicas: 2}}),
			want: field.ErrorList{
				field.Forbidden(field.NewPath("spec", "ports"), "type Job runs to completion and serves nothing: ports is for type Service and StatefulService"),
				field.Forbidden(field.NewPath("spec", "host"), "type Job runs to completion and serves nothing: host is for type Service and StatefulService"),
				field.Forbidden(field.NewPath("spec", "tls"), "type Job runs to completion and serves nothing: tls is for type Service and StatefulService"),
				field.Forbidden(field.NewPath("spec", "autoscaling"), "type Job runs to completion and serves nothing: autoscaling is for type Service and StatefulService"),
			}},
		"cronjob without schedule": {spec: Spec{Type: TypeCronJob, Image: "x"},
			want: field.ErrorList{field.Required(field.NewPath("spec", "cronJob"), "type CronJob needs a schedule")}},
		"cronjob settings on a Service": {spec: Spec{Type: TypeService, Image: "x", Workloads: Workloads{Job: &JobSettings{}, CronJob: cron(CronJobSettings{Schedule: "@daily"})}},
			want: field.ErrorList{
				field.Forbidden(field.NewPath("spec", "job"), "job is only for type Job or CronJob"),
				field.Forbidden(field.NewPath("spec", "cronJob"), "cronJob is only for type CronJob"),
			}},
		"unparsable schedule": {reason: "what the CronJob controller's parser refuses, with its words",
			spec: Spec{Type: TypeCronJob, Image: "x", Workloads: Workloads{CronJob: cron(CronJobSettings{Schedule: "0 26 * * *", TimeZone: tz("Mars/Olympus"), ConcurrencyPolicy: "Sometimes"})}},
			want: field.ErrorList{
				field.Invalid(field.NewPath("spec", "cronJob", "schedule"), "0 26 * * *", "the CronJob controller cannot parse it: end of range (26) above maximum (23): 26"),
				field.Invalid(field.NewPath("spec", "cronJob", "timeZone"), "Mars/Olympus", "not an IANA time zone such as Europe/Berlin"),
				field.NotSupported(field.NewPath("spec", "cronJob", "concurrencyPolicy"), ConcurrencyPolicy("Sometimes"), []string{"Allow", "Forbid", "Replace"}),
			}},
		"TZ in schedule": {spec: Spec{Type: TypeCronJob, Image: "x", Workloads: Workloads{CronJob: cron(CronJobSettings{Schedule: "CRON_TZ=UTC 0 3 * * *"})}},
			want: field.ErrorList{field.Invalid(field.NewPath("spec", "cronJob", "schedule"), "CRON_TZ=UTC 0 3 * * *", "cannot hold TZ= or CRON_TZ=: set cronJob.timeZone instead")}},
		"sidecars": {reason: "names unique and not the app's or the migration's, an image, files of spec.files, ports of a container that exists",
			spec: Spec{Type: TypeService, Image: "x", Pod: Pod{Files: []File{{Name: "cfg", MountPath: "/cfg"}}},
				Ports:     []Port{{Name: "a", Port: 1, Container: "proxy"}, {Name: "b", Port: 2, Container: "nope"}, {Name: "c", Port: 3, Container: "migrate"}},
				Workloads: Workloads{Sidecars: []Sidecar{{Name: "proxy", Image: "p", Files: []string{"cfg", "other"}}, {Name: "app", Image: "a"}, {Name: "proxy", Image: " "}}}},
			want: field.ErrorList{
				field.NotFound(field.NewPath("spec", "sidecars").Index(0).Child("files").Index(1), "other"),
				field.Duplicate(field.NewPath("spec", "sidecars").Index(1).Child("name"), "app"),
				field.Duplicate(field.NewPath("spec", "sidecars").Index(2).Child("name"), "proxy"),
				field.Required(field.NewPath("spec", "sidecars").Index(2).Child("image"), ""),
				field.NotFound(field.NewPath("spec", "ports").Index(1).Child("container"), "nope"),
				field.NotFound(field.NewPath("spec", "ports").Index(2).Child("container"), "migrate"),
			}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, validateWorkloads(tc.spec)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
