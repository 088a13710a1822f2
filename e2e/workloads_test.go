//go:build e2e

package e2e

import (
	"testing"
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
