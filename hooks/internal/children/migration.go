package children

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/stackdome/stackdome/schema"
)

// migration is the init container of spec.migration, or nil: the app
// container as built (image, env, envFrom, resources, security context and
// every mount — files, scratch, shm, storage), with the migration's own
// command and args, and without the ports and probes, which an init
// container may not have. It runs to completion before the app starts, in
// every pod; a failure keeps the pod from starting, and status reads it as
// a crash of container migrate.
func migration(spec schema.Spec, app corev1.Container) []corev1.Container {
	m := spec.Migration
	if m == nil {
		return nil
	}
	return []corev1.Container{{
		Name:            schema.MigrationContainerName,
		Image:           app.Image,
		Command:         m.Command,
		Args:            m.Args,
		Env:             app.Env,
		EnvFrom:         app.EnvFrom,
		Resources:       app.Resources,
		VolumeMounts:    app.VolumeMounts,
		SecurityContext: app.SecurityContext,
	}}
}
