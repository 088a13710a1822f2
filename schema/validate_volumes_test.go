package schema

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestValidateWritableAndMigration: each wrong scratch, shm or migration of
// a spec that slipped past admission gets its readable message.
func TestValidateWritableAndMigration(t *testing.T) {
	q := resource.MustParse
	i32 := func(v int32) *int32 { return &v }
	i64 := func(v int64) *int64 { return &v }
	tmp := Scratch{Name: "tmp", MountPath: "/tmp", SizeLimit: q("64Mi")}
	file := File{Name: "config", MountPath: "/etc/app", ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "c"}}}
	tests := map[string]struct {
		spec Spec
		want string // the whole error; "" means valid
	}{
		"scratch, shm and a migration": {spec: Spec{Type: TypeService, Image: "i", Pod: Pod{
			Scratch: []Scratch{tmp, {Name: "cache", MountPath: "/var/cache/app", SizeLimit: q("1Gi")}},
			Shm:     &Shm{SizeLimit: q("256Mi")}, Migration: &Migration{Command: []string{"/app/migrate"}}}}},
		"a migration of args only": {spec: Spec{Type: TypeService, Image: "i", Pod: Pod{Migration: &Migration{Args: []string{"migrate"}}}}},
		"duplicate scratch": {spec: Spec{Type: TypeService, Image: "i", Pod: Pod{Scratch: []Scratch{tmp, tmp}}},
			want: `invalid spec: spec.scratch[1].name "tmp": scratch names must be unique; spec.scratch[1].mountPath "/tmp" is already mounted`},
		"empty name, relative path, no size": {spec: Spec{Type: TypeService, Image: "i", Pod: Pod{Scratch: []Scratch{{MountPath: "tmp"}}}},
			want: `invalid spec: spec.scratch[0].name "": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'); ` +
				`spec.scratch[0].mountPath "tmp" must be an absolute path below /; spec.scratch[0].sizeLimit 0 must be positive`},
		"scratch at a file's path": {spec: Spec{Type: TypeService, Image: "i", Pod: Pod{Files: []File{file}, Scratch: []Scratch{{Name: "x", MountPath: "/etc/app", SizeLimit: q("1Mi")}}}},
			want: `invalid spec: spec.scratch[0].mountPath "/etc/app" is already mounted`},
		"scratch at storage's path": {spec: Spec{Type: TypeStatefulService, Image: "i", Storage: &Storage{Size: q("1Gi"), MountPath: "/data"},
			Pod: Pod{Scratch: []Scratch{{Name: "x", MountPath: "/data", SizeLimit: q("1Mi")}}}},
			want: `invalid spec: spec.scratch[0].mountPath "/data" is already mounted`},
		"scratch at /dev/shm": {spec: Spec{Type: TypeService, Image: "i", Pod: Pod{Scratch: []Scratch{{Name: "x", MountPath: "/dev/shm", SizeLimit: q("1Mi")}}}},
			want: "invalid spec: spec.scratch[0] cannot be mounted at /dev/shm: set spec.shm for a memory-backed /dev/shm"},
		"negative scratch": {spec: Spec{Type: TypeService, Image: "i", Pod: Pod{Scratch: []Scratch{{Name: "x", MountPath: "/x", SizeLimit: q("-1Mi")}}}},
			want: "invalid spec: spec.scratch[0].sizeLimit -1Mi must be positive"},
		"a name too long for its volume": {spec: Spec{Type: TypeService, Image: "i", Pod: Pod{Scratch: []Scratch{{Name: "a234567890123456789012345678901234567890123456789012345x", MountPath: "/x", SizeLimit: q("1Mi")}}}},
			want: `invalid spec: spec.scratch[0].name "a234567890123456789012345678901234567890123456789012345x": must be no more than 63 characters`},
		"zero shm, a file and storage at /dev/shm": {spec: Spec{Type: TypeStatefulService, Image: "i", Storage: &Storage{Size: q("1Gi"), MountPath: "/dev/shm"},
			Pod: Pod{Shm: &Shm{}, Files: []File{{Name: "f", MountPath: "/dev/shm", Secret: &corev1.SecretVolumeSource{SecretName: "s"}}}}},
			want: `invalid spec: spec.files[0].mountPath "/dev/shm" is already mounted; spec.shm.sizeLimit 0 must be positive; spec.files[0].mountPath /dev/shm is spec.shm's; spec.storage.mountPath /dev/shm is spec.shm's`},
		"a drain and a grace period": {spec: Spec{Type: TypeService, Image: "i", Ports: []Port{{Name: "http", Port: 80}},
			Pod: Pod{DrainSeconds: i32(20), TerminationGracePeriodSeconds: i64(60)}}},
		"no drain": {spec: Spec{Type: TypeService, Image: "i", Ports: []Port{{Name: "http", Port: 80}}, Pod: Pod{DrainSeconds: i32(0), TerminationGracePeriodSeconds: i64(1)}}},
		"the default drain against a short grace period": {spec: Spec{Type: TypeService, Image: "i", Ports: []Port{{Name: "http", Port: 80}}, Pod: Pod{TerminationGracePeriodSeconds: i64(5)}},
			want: "invalid spec: spec.drainSeconds 5 must be less than terminationGracePeriodSeconds 5: the grace period counts from the pod's deletion, drain included, and the app needs what is left to finish its requests after SIGTERM"},
		"a worker needs no drain": {spec: Spec{Type: TypeService, Image: "i", Pod: Pod{TerminationGracePeriodSeconds: i64(1)}}},
		"a drain past the default grace period": {spec: Spec{Type: TypeService, Image: "i", Pod: Pod{DrainSeconds: i32(30)}},
			want: "invalid spec: spec.drainSeconds 30 must be less than terminationGracePeriodSeconds 30: the grace period counts from the pod's deletion, drain included, and the app needs what is left to finish its requests after SIGTERM"},
		"out of range": {spec: Spec{Type: TypeService, Image: "i", Pod: Pod{DrainSeconds: i32(-1), TerminationGracePeriodSeconds: i64(0)}},
			want: "invalid spec: spec.drainSeconds -1 must be between 0 and 300; spec.terminationGracePeriodSeconds 0 must be between 1 and 3600"},
		"a migration without command or args": {spec: Spec{Type: TypeService, Image: "i", Pod: Pod{Migration: &Migration{}}},
			want: "invalid spec: spec.migration needs a command or args: without them it would run the app itself, which never exits, and no pod would start"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := ""
			if err := Validate(tc.spec); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}
