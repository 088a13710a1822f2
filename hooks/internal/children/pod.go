package children

import (
	"encoding/json"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/stackdome/stackdome/schema"
)

// filesVolume is the volume name of a spec.files entry: the prefix keeps it
// apart from the data volume.
func filesVolume(name string) string { return "files-" + name }

// podTemplate is the pod of a spec, without its revision annotation; mount
// says whether the data volume of spec.storage is mounted.
func podTemplate(cfg Config, name string, spec schema.Spec, mount bool) corev1.PodTemplateSpec {
	c := container(cfg, spec, mount)
	pod := corev1.PodSpec{
		ImagePullSecrets:   spec.ImagePullSecrets,
		ServiceAccountName: spec.ServiceAccountName,
		SecurityContext:    podSecurity(cfg, spec.PodSecurityContext),
		NodeSelector:       spec.NodeSelector,
		Tolerations:        spec.Tolerations,
		Affinity:           spec.Affinity,
		// Unset: the API server's 30 s, and the template as before the field.
		TerminationGracePeriodSeconds: spec.TerminationGracePeriodSeconds,
	}
	for _, f := range spec.Files {
		v := corev1.Volume{Name: filesVolume(f.Name)}
		v.ConfigMap, v.Secret = f.ConfigMap, f.Secret
		pod.Volumes = append(pod.Volumes, v)
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: v.Name, MountPath: f.MountPath, ReadOnly: true})
	}
	vols, mounts := writable(spec)
	pod.Volumes = append(pod.Volumes, vols...)
	c.VolumeMounts = append(c.VolumeMounts, mounts...)
	for _, t := range spec.TopologySpreadConstraints {
		if t.LabelSelector == nil {
			// Without a selector a constraint counts no pods at all; the
			// app's own pods are what users mean.
			t.LabelSelector = &metav1.LabelSelector{MatchLabels: Selector(name)}
		}
		pod.TopologySpreadConstraints = append(pod.TopologySpreadConstraints, t)
	}
	pod.Containers = []corev1.Container{c}
	pod.InitContainers = append(sidecars(cfg, spec), migration(spec, c)...)
	if spec.RunsToCompletion() {
		// Every failed run is a pod of its own, kept with its exit code
		// for status to read; backoffLimit counts them.
		pod.RestartPolicy = corev1.RestartPolicyNever
	}
	l := maps.Clone(spec.PodLabels)
	if l == nil {
		l = map[string]string{}
	}
	maps.Copy(l, labels(name)) // ours win; the CRD and Validate refuse the clash
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: l, Annotations: maps.Clone(spec.PodAnnotations)},
		Spec:       pod,
	}
}

// resources are the spec's resources when it sets any request, limit or
// claim — then they win whole, never merged with the platform's — else the
// platform's defaults (--default-requests, --default-limits). They are in
// the pod template, so a change of the defaults rolls every app using them.
func resources(cfg Config, spec schema.Spec) corev1.ResourceRequirements {
	if r := spec.Resources; r != nil && (len(r.Requests) > 0 || len(r.Limits) > 0 || len(r.Claims) > 0) {
		return *r
	}
	d := cfg.DefaultResources
	return corev1.ResourceRequirements{Requests: maps.Clone(d.Requests), Limits: maps.Clone(d.Limits)}
}

// container is the app container of a spec, before the files are mounted;
// mount says whether the data volume of spec.storage is.
func container(cfg Config, spec schema.Spec, mount bool) corev1.Container {
	c := corev1.Container{
		Name:            schema.ContainerName,
		Image:           spec.Image,
		Command:         spec.Command,
		Args:            spec.Args,
		Env:             spec.CoreEnv(),
		EnvFrom:         spec.CoreEnvFrom(),
		SecurityContext: containerSecurity(cfg, spec.SecurityContext),
	}
	c.Resources = resources(cfg, spec)
	c.Ports = containerPorts(spec, schema.ContainerName)
	if hc := spec.HealthChecks; hc != nil {
		c.ReadinessProbe, c.LivenessProbe, c.StartupProbe = hc.Readiness, hc.Liveness, hc.Startup
	}
	// An explicit readiness probe always wins. Otherwise a TCP probe on the
	// primary port with the kubelet's default timing; never a synthesized
	// liveness or startup probe, which would restart-loop a slow starter.
	if primary, ok := appProbePort(spec); ok && c.ReadinessProbe == nil {
		c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
			TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(primary.Port)},
		}}
	}
	if mount {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: dataVolume, MountPath: spec.Storage.MountPath})
	}
	if d := spec.Drain(); d > 0 {
		// Keep serving while Traefik and the Service proxies stop sending
		// to the terminating pod; SIGTERM only then (schema/lifecycle.go).
		c.Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: int64(d)}}}
	}
	return c
}

// withRevision returns the annotations with stackdome's revision added.
func withRevision(annotations map[string]string, rev string) map[string]string {
	return withAnnotation(annotations, schema.AnnotationRevision, rev)
}

// withAnnotation is a copy of annotations with k set to v.
func withAnnotation(annotations map[string]string, k, v string) map[string]string {
	out := maps.Clone(annotations)
	if out == nil {
		out = map[string]string{}
	}
	out[k] = v
	return out
}

// Pod Security "restricted" (https://kubernetes.io/docs/concepts/security/pod-security-standards/):
// non-root, the RuntimeDefault seccomp profile, no privilege escalation,
// every capability dropped. A spec relaxes it field by field.
var (
	restrictedPod       = corev1.PodSecurityContext{RunAsNonRoot: new(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}}
	restrictedContainer = corev1.SecurityContext{AllowPrivilegeEscalation: new(false), Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}}
)

// podSecurity is the pod's security context: the restricted defaults (unless
// Config.NoPodSecurityDefaults) with every field the spec sets in their place.
func podSecurity(cfg Config, spec *corev1.PodSecurityContext) *corev1.PodSecurityContext {
	if cfg.NoPodSecurityDefaults {
		return spec
	}
	out := overlay(restrictedPod, spec)
	return &out
}

// containerSecurity is the app container's security context, as podSecurity.
func containerSecurity(cfg Config, spec *corev1.SecurityContext) *corev1.SecurityContext {
	if cfg.NoPodSecurityDefaults {
		return spec
	}
	out := overlay(restrictedContainer, spec)
	return &out
}

// overlay returns base with each top-level field that set sets replaced by
// set's: a spec relaxes the defaults field by field, and a field it sets is
// its own whole (capabilities: {add: [NET_ADMIN]} drops no capability).
func overlay[T any](base T, set *T) T {
	if set == nil {
		return base
	}
	var m map[string]json.RawMessage
	b, _ := json.Marshal(base)
	_ = json.Unmarshal(b, &m)
	var o map[string]json.RawMessage
	b, _ = json.Marshal(set)
	_ = json.Unmarshal(b, &o)
	maps.Copy(m, o)
	b, _ = json.Marshal(m)
	var out T
	_ = json.Unmarshal(b, &out)
	return out
}
