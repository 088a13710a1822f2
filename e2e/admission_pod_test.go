//go:build e2e

package e2e

import (
	"testing"

	"github.com/stackdome/stackdome/e2e/framework"
)

// TestAdmissionPodFields proves the CRD refuses, at admission and in words a
// user understands, every wrong drain, scratch, shm and migration of #20
// (items 1, 6 and 7) — names that collide, paths mounted twice or at
// stackdome's /dev/shm, sizes that are not positive, a drain the grace
// period cannot hold, wrong types — and admits the right ones.
func TestAdmissionPodFields(t *testing.T) {
	f := framework.NewFixture(t)
	f.RequireStackResourceCRD()
	ns := f.Namespace
	path := "/apis/stackdome.io/v1alpha1/namespaces/" + ns + "/stackresources?dryRun=All"
	with := framework.SpecWith
	tmp := obj{"name": "tmp", "mountPath": "/tmp", "sizeLimit": "64Mi"}
	file := obj{"name": "config", "mountPath": "/etc/app", "configMap": obj{"name": "c"}}
	cases := map[string]framework.AdmissionCase{
		"scratch, shm and a migration": {Spec: with(obj{
			"scratch":   []any{tmp, obj{"name": "cache", "mountPath": "/var/cache/app", "sizeLimit": "1Gi"}},
			"shm":       obj{"sizeLimit": "256Mi"},
			"migration": obj{"command": []any{"/app/migrate"}, "args": []any{"up"}},
		})},
		"a migration of args only": {Spec: with(obj{"migration": obj{"args": []any{"migrate"}}})},
		"a sizeLimit as a number":  {Spec: with(obj{"scratch": []any{obj{"name": "tmp", "mountPath": "/tmp", "sizeLimit": 1048576}}})},
		"duplicate scratch names": {
			Spec: with(obj{"scratch": []any{tmp, obj{"name": "tmp", "mountPath": "/var/tmp", "sizeLimit": "1Mi"}}}),
			Want: []string{"scratch names must be unique"},
		},
		"two scratch at one path": {
			Spec: with(obj{"scratch": []any{tmp, obj{"name": "other", "mountPath": "/tmp", "sizeLimit": "1Mi"}}}),
			Want: []string{"scratch mountPaths must be unique"},
		},
		"scratch at a file's path": {
			Spec: with(obj{"files": []any{file}, "scratch": []any{obj{"name": "x", "mountPath": "/etc/app", "sizeLimit": "1Mi"}}}),
			Want: []string{"a scratch mountPath cannot be a file's mountPath"},
		},
		"scratch at storage's path": {
			Spec: with(obj{"type": "StatefulService", "storage": obj{"size": "1Gi", "mountPath": "/data"},
				"scratch": []any{obj{"name": "x", "mountPath": "/data", "sizeLimit": "1Mi"}}}),
			Want: []string{"a scratch mountPath cannot be storage.mountPath"},
		},
		"scratch at /dev/shm": {
			Spec: with(obj{"scratch": []any{obj{"name": "x", "mountPath": "/dev/shm", "sizeLimit": "1Mi"}}}),
			Want: []string{"scratch cannot be mounted at /dev/shm: set spec.shm"},
		},
		"a file at /dev/shm with shm": {
			Spec: with(obj{"shm": obj{"sizeLimit": "1Gi"}, "files": []any{obj{"name": "f", "mountPath": "/dev/shm", "secret": obj{"secretName": "s"}}}}),
			Want: []string{"/dev/shm is spec.shm's"},
		},
		"scratch without a sizeLimit": {
			Spec: with(obj{"scratch": []any{obj{"name": "tmp", "mountPath": "/tmp"}}}),
			Want: []string{"spec.scratch[0].sizeLimit", "Required value"},
		},
		"a zero sizeLimit": {
			Spec: with(obj{"scratch": []any{obj{"name": "tmp", "mountPath": "/tmp", "sizeLimit": "0"}}}),
			Want: []string{"sizeLimit must be positive"},
		},
		"a negative shm": {
			Spec: with(obj{"shm": obj{"sizeLimit": "-1Gi"}}),
			Want: []string{"shm.sizeLimit must be positive"},
		},
		"an empty scratch name": {
			Spec: with(obj{"scratch": []any{obj{"name": "", "mountPath": "/tmp", "sizeLimit": "1Mi"}}}),
			Want: []string{"spec.scratch[0].name"},
		},
		"a scratch name that is no DNS label": {
			Spec: with(obj{"scratch": []any{obj{"name": "Tmp_Dir", "mountPath": "/tmp", "sizeLimit": "1Mi"}}}),
			Want: []string{"spec.scratch[0].name", "should match"},
		},
		"a relative scratch path": {
			Spec: with(obj{"scratch": []any{obj{"name": "tmp", "mountPath": "tmp", "sizeLimit": "1Mi"}}}),
			Want: []string{"spec.scratch[0].mountPath", "should match"},
		},
		"scratch as an object": {
			Spec: with(obj{"scratch": tmp}),
			Want: []string{"spec.scratch", "must be of type array"},
		},
		"a sizeLimit that is no quantity": {
			Spec: with(obj{"shm": obj{"sizeLimit": "a lot"}}),
			Want: []string{"spec.shm.sizeLimit"},
		},
		"a drain and a grace period":  {Spec: with(obj{"drainSeconds": 20, "terminationGracePeriodSeconds": 60})},
		"no drain":                    {Spec: with(obj{"drainSeconds": 0, "terminationGracePeriodSeconds": 1})},
		"a worker with a short grace": {Spec: with(obj{"ports": nil, "terminationGracePeriodSeconds": 1})},
		"the default drain against a short grace period": {
			Spec: with(obj{"terminationGracePeriodSeconds": 5}),
			Want: []string{"drainSeconds (5 by default for an app with ports) must be less than terminationGracePeriodSeconds (30 when unset)"},
		},
		"a drain past the default grace period": {
			Spec: with(obj{"drainSeconds": 30}),
			Want: []string{"must be less than terminationGracePeriodSeconds"},
		},
		"a negative drain": {
			Spec: with(obj{"drainSeconds": -1}),
			Want: []string{"spec.drainSeconds", "greater than or equal to 0"},
		},
		"a drain as a string": {
			Spec: with(obj{"drainSeconds": "5s"}),
			Want: []string{"spec.drainSeconds", "must be of type integer"},
		},
		"a grace period of 0": {
			Spec: with(obj{"drainSeconds": 0, "terminationGracePeriodSeconds": 0}),
			Want: []string{"spec.terminationGracePeriodSeconds", "greater than or equal to 1"},
		},
		"a migration without command or args": {
			Spec: with(obj{"migration": obj{}}),
			Want: []string{"migration needs a command or args"},
		},
		"a migration of empty lists": {
			Spec: with(obj{"migration": obj{"command": []any{}}}),
			Want: []string{"spec.migration.command", "at least 1 items"},
		},
		"a migration command as a string": {
			Spec: with(obj{"migration": obj{"command": "migrate"}}),
			Want: []string{"spec.migration.command", "must be of type array"},
		},
	}
	f.TryAdmission(path, cases)
}
