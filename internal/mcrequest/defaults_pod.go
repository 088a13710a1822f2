package mcrequest

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// The API server's defaults of a pod template: the pod, its volumes, its
// containers and their probes (pkg/apis/core/v1/defaults.go; see
// defaults.go).

// SetDefaults_PodSpec and SetDefaults_Container (core/v1): ClusterFirst,
// restartPolicy Always, the default scheduler, an empty security context,
// 30 s of termination grace; each container's pull policy, termination
// message and probes.
func podSpec(s *corev1.PodSpec) {
	if s.DNSPolicy == "" {
		s.DNSPolicy = corev1.DNSClusterFirst
	}
	if s.RestartPolicy == "" {
		s.RestartPolicy = corev1.RestartPolicyAlways
	}
	if s.SchedulerName == "" {
		s.SchedulerName = corev1.DefaultSchedulerName
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &corev1.PodSecurityContext{}
	}
	orDefault(&s.TerminationGracePeriodSeconds, corev1.DefaultTerminationGracePeriodSeconds)
	for i := range s.InitContainers {
		container(&s.InitContainers[i])
	}
	for i := range s.Containers {
		container(&s.Containers[i])
	}
	for i := range s.Volumes {
		volume(&s.Volumes[i].VolumeSource)
	}
}

// SetDefaults_SecretVolumeSource, _ConfigMapVolumeSource,
// _ProjectedVolumeSource and _DownwardAPIVolumeSource: mode 0644.
func volume(v *corev1.VolumeSource) {
	mode := corev1.SecretVolumeSourceDefaultMode // 0644, as each of the four
	switch {
	case v.Secret != nil:
		orDefault(&v.Secret.DefaultMode, mode)
	case v.ConfigMap != nil:
		orDefault(&v.ConfigMap.DefaultMode, mode)
	case v.Projected != nil:
		orDefault(&v.Projected.DefaultMode, mode)
	case v.DownwardAPI != nil:
		orDefault(&v.DownwardAPI.DefaultMode, mode)
	}
}

// SetDefaults_Container: IfNotPresent, but Always for an image tagged latest
// or untagged; the termination message at /dev/termination-log, from File.
func container(c *corev1.Container) {
	if c.ImagePullPolicy == "" {
		c.ImagePullPolicy = corev1.PullIfNotPresent
		if tag := imageTag(c.Image); tag == "" || tag == "latest" {
			c.ImagePullPolicy = corev1.PullAlways
		}
	}
	if c.TerminationMessagePath == "" {
		c.TerminationMessagePath = corev1.TerminationMessagePathDefault
	}
	if c.TerminationMessagePolicy == "" {
		c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
	}
	for i := range c.Ports {
		if c.Ports[i].Protocol == "" {
			c.Ports[i].Protocol = corev1.ProtocolTCP
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.APIVersion == "" {
			e.ValueFrom.FieldRef.APIVersion = "v1" // SetDefaults_ObjectFieldSelector
		}
	}
	for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe, c.StartupProbe} {
		probe(p)
	}
}

// imageTag is the tag of an image reference, "" when it has none (a digest
// counts as a tag: the policy is then IfNotPresent).
func imageTag(image string) string {
	if strings.Contains(image, "@") {
		return "digest"
	}
	name := image[strings.LastIndex(image, "/")+1:]
	if i := strings.LastIndex(name, ":"); i >= 0 {
		return name[i+1:]
	}
	return ""
}

// SetDefaults_Probe: every 10 s, 1 s timeout, one success, three
// failures; and SetDefaults_HTTPGetAction: path /, scheme HTTP.
func probe(p *corev1.Probe) {
	if p == nil {
		return
	}
	if g := p.HTTPGet; g != nil {
		if g.Path == "" {
			g.Path = "/"
		}
		if g.Scheme == "" {
			g.Scheme = corev1.URISchemeHTTP
		}
	}
	for _, f := range []struct {
		v   *int32
		def int32
	}{{&p.TimeoutSeconds, 1}, {&p.PeriodSeconds, 10}, {&p.SuccessThreshold, 1}, {&p.FailureThreshold, 3}} {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
}
