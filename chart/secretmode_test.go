package chart

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestSecretVolumesReadable: every Secret the chart mounts into its pods
// can be read by the process the pod runs. The kubelet writes a secret
// volume's files owned by root, with group fsGroup when the pod sets one
// (and adds fsGroup to the process's groups), with the volume's
// defaultMode. The hooks' TLS Secret is mounted 0440; without fsGroup the
// non-root stackdome (uid and gid 65532) could read none of it and exited
// at start on a real node, crash-looping (e2e/node found it; the kubelet
// stand-in of e2e/ reads files as root).
func TestSecretVolumesReadable(t *testing.T) {
	objs := decode(t, render(t, install{}))
	for _, d := range []*appsv1.Deployment{find[*appsv1.Deployment](t, objs, "Deployment"), findPages[*appsv1.Deployment](t, objs, "Deployment")} {
		pod := d.Spec.Template.Spec
		for _, v := range pod.Volumes {
			if v.Secret == nil {
				continue
			}
			mode := int32(0o644) // the kubelet's default
			if v.Secret.DefaultMode != nil {
				mode = *v.Secret.DefaultMode
			}
			for _, c := range pod.Containers {
				if !mounts(c, v.Name) {
					continue
				}
				if !readable(pod.SecurityContext, c.SecurityContext, mode) {
					t.Errorf("Deployment %s: container %s cannot read Secret volume %s (mode %#o, pod securityContext %+v)",
						d.Name, c.Name, v.Name, mode, pod.SecurityContext)
				}
			}
		}
	}
}

func mounts(c corev1.Container, volume string) bool {
	for _, m := range c.VolumeMounts {
		if m.Name == volume {
			return true
		}
	}
	return false
}

// readable says whether a process of the pod and container security
// contexts reads a file of mode owned by root:fsGroup (root:root without
// fsGroup).
func readable(pod *corev1.PodSecurityContext, c *corev1.SecurityContext, mode int32) bool {
	uid := int64(0)
	if pod != nil && pod.RunAsUser != nil {
		uid = *pod.RunAsUser
	}
	if c != nil && c.RunAsUser != nil {
		uid = *c.RunAsUser
	}
	switch {
	case uid == 0 && mode&0o400 != 0:
		return true
	case mode&0o004 != 0:
		return true
	}
	// The file's group is fsGroup, which the process is in.
	return pod != nil && pod.FSGroup != nil && mode&0o040 != 0
}
