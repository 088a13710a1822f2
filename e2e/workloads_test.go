//go:build e2e

package e2e

import (
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestAdmissionWorkloads proves the CRD's rules for sidecars and the
// run-to-completion types on a real API server: a Job or CronJob refuses
// every port-only field with one message saying why, a CronJob needs its
// schedule and the schedule its shape, and a port names an existing
// container. The schedule's full grammar is the CronJob controller's parser
// (schema.Validate); CEL checks its shape.
func TestAdmissionWorkloads(t *testing.T) {
	f := framework.NewFixture(t)
	f.RequireStackResourceCRD()
	ns := f.Namespace
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
	f.TryAdmission(path, map[string]framework.AdmissionCase{
		"a Job":               {Spec: job(nil)},
		"a CronJob":           {Spec: cron(nil)},
		"a CronJob @daily":    {Spec: cron(obj{"cronJob": obj{"schedule": "@daily"}})},
		"a Job with ports":    {Spec: job(obj{"ports": []any{obj{"name": "http", "port": 8080}}}), Want: []string{"spec.ports", portOnly, "ports is for type Service and StatefulService"}},
		"a Job with a host":   {Spec: job(obj{"host": "a.example.com"}), Want: []string{portOnly}},
		"a CronJob with tls":  {Spec: cron(obj{"tls": obj{}}), Want: []string{portOnly}},
		"a CronJob autoscale": {Spec: cron(obj{"autoscaling": obj{"maxReplicas": 3}, "resources": obj{"requests": obj{"cpu": "100m"}}}), Want: []string{portOnly}},
		"a Job with replicas": {Spec: job(obj{"replicas": 2}), Want: []string{portOnly}},
		"a Job with errorPages and middlewares": {Spec: job(obj{"errorPages": obj{"enabled": false}, "middlewares": []any{obj{"name": "sso"}}}),
			Want: []string{portOnly}},
		"a CronJob without cronJob": {Spec: obj{"type": "CronJob", "image": "example.invalid/report:1"}, Want: []string{"cronJob is required for type CronJob"}},
		"cronJob on a Service":      {Spec: framework.SpecWith(obj{"cronJob": obj{"schedule": "@daily"}}), Want: []string{"spec.cronJob", "cronJob is only for type CronJob"}},
		"job on a Service":          {Spec: framework.SpecWith(obj{"job": obj{"backoffLimit": 1}}), Want: []string{"job is only for type Job or CronJob"}},
		"a schedule of four fields": {Spec: cron(obj{"cronJob": obj{"schedule": "0 3 * *"}}), Want: []string{"cronJob.schedule must be five fields"}},
		"TZ in the schedule with a timeZone": {Spec: cron(obj{"cronJob": obj{"schedule": "CRON_TZ=UTC 0 3 * * *", "timeZone": "UTC"}}),
			Want: []string{"set cronJob.timeZone instead"}},
		"an unknown concurrencyPolicy": {Spec: cron(obj{"cronJob": obj{"schedule": "@daily", "concurrencyPolicy": "Sometimes"}}),
			Want: []string{"spec.cronJob.concurrencyPolicy", `Unsupported value: "Sometimes"`}},
		"a sidecar": {Spec: framework.SpecWith(obj{"ports": []any{obj{"name": "http", "port": 8080}, obj{"name": "proxy", "port": 4180, "container": "oauth2-proxy"}},
			"files":    []any{obj{"name": "cfg", "mountPath": "/etc/cfg", "configMap": obj{"name": "cfg"}}},
			"sidecars": []any{obj{"name": "oauth2-proxy", "image": "example.invalid/proxy:1", "files": []any{"cfg"}, "env": []any{obj{"name": "A", "value": "b"}}}}})},
		"a sidecar named app": {Spec: framework.SpecWith(obj{"sidecars": []any{obj{"name": "app", "image": "example.invalid/proxy:1"}}}),
			Want: []string{"a sidecar cannot be named app or migrate"}},
		"two sidecars of one name": {Spec: framework.SpecWith(obj{"sidecars": []any{obj{"name": "p", "image": "x"}, obj{"name": "p", "image": "y"}}}),
			Want: []string{"sidecar names must be unique"}},
		"a port of no container": {Spec: framework.SpecWith(obj{"ports": []any{obj{"name": "http", "port": 8080, "container": "proxy"}}}),
			Want: []string{"a port's container must be app or the name of a sidecar"}},
		"a sidecar file not in spec.files": {Spec: framework.SpecWith(obj{"sidecars": []any{obj{"name": "p", "image": "x", "files": []any{"cfg"}}}}),
			Want: []string{"a sidecar's files must name entries of spec.files"}},
	})
}
