package children

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/stackdome/stackdome/schema"
)

// The volumes stackdome names: data (spec.storage, a claim template),
// files-<name> (spec.files), scratch-<name> (spec.scratch) and shm
// (spec.shm). The prefixes keep a user's names apart from each other and
// from data and shm, so no spec can make two volumes of one name.
const shmVolume = "shm"

func scratchVolume(name string) string { return "scratch-" + name }

// writable is the emptyDir volumes of a spec and their mounts, in spec
// order, the shared memory last: what the app container (and the
// migration, which needs the same paths) mounts read-write. A spec without
// them gets none, and its pod template — and so its revision — is what it
// was before these fields existed.
func writable(spec schema.Spec) ([]corev1.Volume, []corev1.VolumeMount) {
	var vols []corev1.Volume
	var mounts []corev1.VolumeMount
	for _, s := range spec.Scratch {
		size := s.SizeLimit
		v := corev1.Volume{Name: scratchVolume(s.Name)}
		v.EmptyDir = &corev1.EmptyDirVolumeSource{SizeLimit: &size}
		vols = append(vols, v)
		mounts = append(mounts, corev1.VolumeMount{Name: v.Name, MountPath: s.MountPath})
	}
	if shm := spec.Shm; shm != nil {
		size := shm.SizeLimit
		v := corev1.Volume{Name: shmVolume}
		v.EmptyDir = &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &size}
		vols = append(vols, v)
		mounts = append(mounts, corev1.VolumeMount{Name: v.Name, MountPath: schema.ShmMountPath})
	}
	return vols, mounts
}
