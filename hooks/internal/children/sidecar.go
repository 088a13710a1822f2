package children

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/stackdome/stackdome/schema"
)

// sidecars are the spec's sidecars as native sidecars: init containers
// with restartPolicy Always, which the kubelet starts in order before the
// next init container and the app, keeps running (restarting them when
// they exit) beside the app, and stops after it; a Job's pod completes
// when the app does. They come before the migration so that a migration
// can reach what a sidecar serves (a database proxy). Each gets the
// restricted container defaults, the ports spec.ports gives it, its own
// probes, and the spec.files it names, mounted where the app has them.
func sidecars(cfg Config, spec schema.Spec) []corev1.Container {
	if len(spec.Sidecars) == 0 {
		return nil
	}
	files := map[string]schema.File{}
	for _, f := range spec.Files {
		files[f.Name] = f
	}
	always := corev1.ContainerRestartPolicyAlways
	out := make([]corev1.Container, 0, len(spec.Sidecars))
	for _, s := range spec.Sidecars {
		c := corev1.Container{
			Name:            s.Name,
			Image:           s.Image,
			Command:         s.Command,
			Args:            s.Args,
			Env:             schema.Spec{Env: s.Env}.CoreEnv(),
			EnvFrom:         schema.Spec{Pod: schema.Pod{EnvFrom: s.EnvFrom}}.CoreEnvFrom(),
			SecurityContext: containerSecurity(cfg, s.SecurityContext),
			RestartPolicy:   &always,
			Ports:           containerPorts(spec, s.Name),
		}
		if s.Resources != nil {
			c.Resources = *s.Resources
		}
		if hc := s.HealthChecks; hc != nil {
			c.ReadinessProbe, c.LivenessProbe, c.StartupProbe = hc.Readiness, hc.Liveness, hc.Startup
		}
		for _, n := range s.Files {
			if f, ok := files[n]; ok {
				c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: filesVolume(f.Name), MountPath: f.MountPath, ReadOnly: true})
			}
		}
		out = append(out, c)
	}
	return out
}

// containerPorts are the declared ports container listens on: those whose
// container is its name (app: those naming none too).
func containerPorts(spec schema.Spec, container string) []corev1.ContainerPort {
	var out []corev1.ContainerPort
	for _, p := range spec.Ports {
		if portContainer(p) == container {
			out = append(out, corev1.ContainerPort{Name: p.Name, ContainerPort: p.Port, Protocol: corev1.ProtocolTCP})
		}
	}
	return out
}

// portContainer is the container a declared port belongs to.
func portContainer(p schema.Port) string {
	if p.Container == "" {
		return schema.ContainerName
	}
	return p.Container
}

// appProbePort is the port the app's synthesized readiness probe dials:
// the primary port when it is the app's own, else the app's first public
// port, else its first port. A port of a sidecar is never probed on the
// app: the app's own readiness decides serving.
func appProbePort(spec schema.Spec) (schema.Port, bool) {
	if p, ok := spec.PrimaryPort(); ok && portContainer(p) == schema.ContainerName {
		return p, true
	}
	var first *schema.Port
	for i, p := range spec.Ports {
		if portContainer(p) != schema.ContainerName {
			continue
		}
		if p.Public {
			return p, true
		}
		if first == nil {
			first = &spec.Ports[i]
		}
	}
	if first == nil {
		return schema.Port{}, false
	}
	return *first, true
}
