//go:build e2e

package e2e

import "testing"

// TestAdmissionPodFields proves the CRD refuses, at admission and in words a
// user understands, every wrong drain, scratch, shm and migration of #20
// (items 1, 6 and 7) — names that collide, paths mounted twice or at
// stackdome's /dev/shm, sizes that are not positive, a drain the grace
// period cannot hold, wrong types — and admits the right ones.
func TestAdmissionPodFields(t *testing.T) {
	requireStackResourceCRD(t)
	ns := newNamespace(t)
	path := "/apis/stackdome.io/v1alpha1/namespaces/" + ns + "/stackresources?dryRun=All"
	with := specWith
	tmp := obj{"name": "tmp", "mountPath": "/tmp", "sizeLimit": "64Mi"}
	file := obj{"name": "config", "mountPath": "/etc/app", "configMap": obj{"name": "c"}}
	cases := map[string]admissionCase{
		"scratch, shm and a migration": {spec: with(obj{
			"scratch":   []any{tmp, obj{"name": "cache", "mountPath": "/var/cache/app", "sizeLimit": "1Gi"}},
			"shm":       obj{"sizeLimit": "256Mi"},
			"migration": obj{"command": []any{"/app/migrate"}, "args": []any{"up"}},
		})},
		"a migration of args only": {spec: with(obj{"migration": obj{"args": []any{"migrate"}}})},
		"a sizeLimit as a number":  {spec: with(obj{"scratch": []any{obj{"name": "tmp", "mountPath": "/tmp", "sizeLimit": 1048576}}})},
		"duplicate scratch names": {
			spec: with(obj{"scratch": []any{tmp, obj{"name": "tmp", "mountPath": "/var/tmp", "sizeLimit": "1Mi"}}}),
			want: []string{"scratch names must be unique"},
		},
		"two scratch at one path": {
			spec: with(obj{"scratch": []any{tmp, obj{"name": "other", "mountPath": "/tmp", "sizeLimit": "1Mi"}}}),
			want: []string{"scratch mountPaths must be unique"},
		},
		"scratch at a file's path": {
			spec: with(obj{"files": []any{file}, "scratch": []any{obj{"name": "x", "mountPath": "/etc/app", "sizeLimit": "1Mi"}}}),
			want: []string{"a scratch mountPath cannot be a file's mountPath"},
		},
		"scratch at storage's path": {
			spec: with(obj{"type": "StatefulService", "storage": obj{"size": "1Gi", "mountPath": "/data"},
				"scratch": []any{obj{"name": "x", "mountPath": "/data", "sizeLimit": "1Mi"}}}),
			want: []string{"a scratch mountPath cannot be storage.mountPath"},
		},
		"scratch at /dev/shm": {
			spec: with(obj{"scratch": []any{obj{"name": "x", "mountPath": "/dev/shm", "sizeLimit": "1Mi"}}}),
			want: []string{"scratch cannot be mounted at /dev/shm: set spec.shm"},
		},
		"a file at /dev/shm with shm": {
			spec: with(obj{"shm": obj{"sizeLimit": "1Gi"}, "files": []any{obj{"name": "f", "mountPath": "/dev/shm", "secret": obj{"secretName": "s"}}}}),
			want: []string{"/dev/shm is spec.shm's"},
		},
		"scratch without a sizeLimit": {
			spec: with(obj{"scratch": []any{obj{"name": "tmp", "mountPath": "/tmp"}}}),
			want: []string{"spec.scratch[0].sizeLimit", "Required value"},
		},
		"a zero sizeLimit": {
			spec: with(obj{"scratch": []any{obj{"name": "tmp", "mountPath": "/tmp", "sizeLimit": "0"}}}),
			want: []string{"sizeLimit must be positive"},
		},
		"a negative shm": {
			spec: with(obj{"shm": obj{"sizeLimit": "-1Gi"}}),
			want: []string{"shm.sizeLimit must be positive"},
		},
		"an empty scratch name": {
			spec: with(obj{"scratch": []any{obj{"name": "", "mountPath": "/tmp", "sizeLimit": "1Mi"}}}),
			want: []string{"spec.scratch[0].name"},
		},
		"a scratch name that is no DNS label": {
			spec: with(obj{"scratch": []any{obj{"name": "Tmp_Dir", "mountPath": "/tmp", "sizeLimit": "1Mi"}}}),
			want: []string{"spec.scratch[0].name", "should match"},
		},
		"a relative scratch path": {
			spec: with(obj{"scratch": []any{obj{"name": "tmp", "mountPath": "tmp", "sizeLimit": "1Mi"}}}),
			want: []string{"spec.scratch[0].mountPath", "should match"},
		},
		"scratch as an object": {
			spec: with(obj{"scratch": tmp}),
			want: []string{"spec.scratch", "must be of type array"},
		},
		"a sizeLimit that is no quantity": {
			spec: with(obj{"shm": obj{"sizeLimit": "a lot"}}),
			want: []string{"spec.shm.sizeLimit"},
		},
		"a drain and a grace period":  {spec: with(obj{"drainSeconds": 20, "terminationGracePeriodSeconds": 60})},
		"no drain":                    {spec: with(obj{"drainSeconds": 0, "terminationGracePeriodSeconds": 1})},
		"a worker with a short grace": {spec: with(obj{"ports": nil, "terminationGracePeriodSeconds": 1})},
		"the default drain against a short grace period": {
			spec: with(obj{"terminationGracePeriodSeconds": 5}),
			want: []string{"drainSeconds (5 by default for an app with ports) must be less than terminationGracePeriodSeconds (30 when unset)"},
		},
		"a drain past the default grace period": {
			spec: with(obj{"drainSeconds": 30}),
			want: []string{"must be less than terminationGracePeriodSeconds"},
		},
		"a negative drain": {
			spec: with(obj{"drainSeconds": -1}),
			want: []string{"spec.drainSeconds", "greater than or equal to 0"},
		},
		"a drain as a string": {
			spec: with(obj{"drainSeconds": "5s"}),
			want: []string{"spec.drainSeconds", "must be of type integer"},
		},
		"a grace period of 0": {
			spec: with(obj{"drainSeconds": 0, "terminationGracePeriodSeconds": 0}),
			want: []string{"spec.terminationGracePeriodSeconds", "greater than or equal to 1"},
		},
		"a migration without command or args": {
			spec: with(obj{"migration": obj{}}),
			want: []string{"migration needs a command or args"},
		},
		"a migration of empty lists": {
			spec: with(obj{"migration": obj{"command": []any{}}}),
			want: []string{"spec.migration.command", "at least 1 items"},
		},
		"a migration command as a string": {
			spec: with(obj{"migration": obj{"command": "migrate"}}),
			want: []string{"spec.migration.command", "must be of type array"},
		},
	}
	tryAdmission(t, path, cases)
}
