package schema

import (
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// reservedPodLabels are the labels the workload and its Service select the
// pods by, and those the workload controllers set.
var reservedPodLabels = []string{LabelName, LabelInstance, LabelManagedBy,
	LabelPodTemplateHash, LabelControllerRevisionHash, LabelStatefulSetPodName}

// validatePod checks the pod-level fields (Pod, inlined in Spec) where the
// CRD or the API server would refuse the workload, so that a spec that
// slipped past admission is reported instead of failing every apply. Maps
// are read in key order: the message becomes a status message, which must
// not change between syncs.
func validatePod(s Spec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range s.ImagePullSecrets {
		if r.Name == "" {
			errs = append(errs, field.Required(path.Child("imagePullSecrets").Index(i).Child("name"), ""))
		}
	}
	if n := s.ServiceAccountName; n != "" {
		for _, msg := range validation.IsDNS1123Subdomain(n) {
			errs = append(errs, field.Invalid(path.Child("serviceAccountName"), n, msg))
		}
	}
	errs = append(errs, validateFiles(s, path.Child("files"))...)
	errs = append(errs, validateEnv(s.EnvFrom, s.Env, path)...)
	errs = append(errs, validateScratch(s, path.Child("scratch"))...)
	if s.Shm != nil && s.Shm.SizeLimit.Sign() <= 0 {
		errs = append(errs, field.Invalid(path.Child("shm", "sizeLimit"), s.Shm.SizeLimit.String(), "shm.sizeLimit must be positive"))
	}
	if m := s.Migration; m != nil && len(m.Command) == 0 && len(m.Args) == 0 {
		errs = append(errs, field.Required(path.Child("migration", "command"), "migration needs a command or args: without them it would run the app itself, which never exits, and no pod would start"))
	}
	errs = append(errs, validateTermination(s, path)...)
	errs = append(errs, validateMetadata(s, path)...)
	return append(errs, validatePlacement(s, path)...)
}

// validateFiles checks spec.files: names, mount paths, one source each.
func validateFiles(s Spec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	names, mounts := map[string]bool{}, map[string]bool{}
	for i, f := range s.Files {
		fp := path.Index(i)
		for _, msg := range validation.IsDNS1123Label("files-" + f.Name) {
			errs = append(errs, field.Invalid(fp.Child("name"), f.Name, msg))
		}
		if names[f.Name] {
			errs = append(errs, field.Duplicate(fp.Child("name"), f.Name))
		}
		mp := fp.Child("mountPath")
		switch {
		case !strings.HasPrefix(f.MountPath, "/") || len(f.MountPath) < 2:
			errs = append(errs, field.Invalid(mp, f.MountPath, "must be an absolute path below /"))
		case s.Shm != nil && f.MountPath == ShmMountPath:
			errs = append(errs, field.Forbidden(mp, "/dev/shm is spec.shm's: no file or storage can be mounted there"))
		case mounts[f.MountPath]:
			errs = append(errs, field.Duplicate(mp, f.MountPath))
		}
		names[f.Name], mounts[f.MountPath] = true, true
		switch {
		case (f.ConfigMap == nil) == (f.Secret == nil):
			errs = append(errs, field.Invalid(fp, f.Name, "a file takes exactly one of configMap and secret"))
		case f.ConfigMap != nil && f.ConfigMap.Name == "":
			errs = append(errs, field.Required(fp.Child("configMap", "name"), ""))
		case f.Secret != nil && f.Secret.SecretName == "":
			errs = append(errs, field.Required(fp.Child("secret", "secretName"), ""))
		}
	}
	return errs
}

// validateScratch checks spec.scratch: names that make volume names, one
// mount a path — across files, scratch and /dev/shm (storage's own check
// names storage) — and sizes that are positive (a zero sizeLimit would
// evict the pod at its first write).
func validateScratch(s Spec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	files := map[string]bool{}
	for _, f := range s.Files {
		files[f.MountPath] = true
	}
	names, mounts := map[string]bool{}, map[string]bool{}
	for i, v := range s.Scratch {
		vp := path.Index(i)
		for _, msg := range validation.IsDNS1123Label("scratch-" + v.Name) {
			errs = append(errs, field.Invalid(vp.Child("name"), v.Name, msg))
		}
		if names[v.Name] {
			errs = append(errs, field.Duplicate(vp.Child("name"), v.Name))
		}
		names[v.Name] = true
		mp := vp.Child("mountPath")
		switch {
		case !strings.HasPrefix(v.MountPath, "/") || len(v.MountPath) < 2:
			errs = append(errs, field.Invalid(mp, v.MountPath, "must be an absolute path below /"))
		case v.MountPath == ShmMountPath:
			errs = append(errs, field.Forbidden(mp, "scratch cannot be mounted at /dev/shm: set spec.shm for a memory-backed /dev/shm"))
		case mounts[v.MountPath]:
			errs = append(errs, field.Duplicate(mp, v.MountPath))
		case files[v.MountPath]:
			errs = append(errs, field.Invalid(mp, v.MountPath, "a scratch mountPath cannot be a file's mountPath"))
		}
		mounts[v.MountPath] = true
		if v.SizeLimit.Sign() <= 0 {
			errs = append(errs, field.Invalid(vp.Child("sizeLimit"), v.SizeLimit.String(), "sizeLimit must be positive"))
		}
	}
	return errs
}

// validateTermination checks the drain against the grace period it is
// part of: the kubelet kills the container when the grace period ends,
// preStop sleep included. The error is at drainSeconds when it is set,
// else at the grace period that is too short for the default drain.
func validateTermination(s Spec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if d := s.DrainSeconds; d != nil && (*d < 0 || *d > MaxDrainSeconds) {
		errs = append(errs, field.Invalid(path.Child("drainSeconds"), *d, validation.InclusiveRangeError(0, MaxDrainSeconds)))
	}
	if g := s.TerminationGracePeriodSeconds; g != nil && (*g < MinTerminationGracePeriodSeconds || *g > MaxTerminationGracePeriodSeconds) {
		errs = append(errs, field.Invalid(path.Child("terminationGracePeriodSeconds"), *g, validation.InclusiveRangeError(MinTerminationGracePeriodSeconds, MaxTerminationGracePeriodSeconds)))
	}
	if int64(s.Drain()) < s.GracePeriod() {
		return errs
	}
	if s.DrainSeconds != nil {
		return append(errs, field.Invalid(path.Child("drainSeconds"), *s.DrainSeconds, drainMessage))
	}
	return append(errs, field.Invalid(path.Child("terminationGracePeriodSeconds"), s.GracePeriod(), drainMessage))
}

// drainMessage is the drain rule's message, the CRD's words.
const drainMessage = "drainSeconds (5 by default for an app with ports) must be less than terminationGracePeriodSeconds (30 when unset): the grace period counts from the pod's deletion, drain included, and the app needs what is left to finish its requests after SIGTERM"

// validateMetadata checks the pods' labels and annotations.
func validateMetadata(s Spec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	lp := path.Child("podLabels")
	for _, k := range slices.Sorted(maps.Keys(s.PodLabels)) {
		v := s.PodLabels[k]
		if slices.Contains(reservedPodLabels, k) {
			errs = append(errs, field.Forbidden(lp.Key(k), "the workload and its Service select the pods by it"))
		}
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(lp, k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(lp.Key(k), v, msg))
		}
	}
	ap := path.Child("podAnnotations")
	for _, k := range slices.Sorted(maps.Keys(s.PodAnnotations)) {
		switch k {
		case AnnotationRevision:
			errs = append(errs, field.Forbidden(ap.Key(k), "stackdome marks the pods of each revision with it"))
		case AnnotationConfigDigest:
			errs = append(errs, field.Forbidden(ap.Key(k), "stackdome rolls the pods with it when their ConfigMaps and Secrets change"))
		}
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			errs = append(errs, field.Invalid(ap, k, msg))
		}
	}
	return errs
}

// validatePlacement checks the node selector, tolerations and spread
// constraints where the API server would refuse the workload.
func validatePlacement(s Spec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	np := path.Child("nodeSelector")
	for _, k := range slices.Sorted(maps.Keys(s.NodeSelector)) {
		v := s.NodeSelector[k]
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(np, k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(np.Key(k), v, msg))
		}
	}
	for i, t := range s.Tolerations {
		tp := path.Child("tolerations").Index(i)
		switch t.Operator {
		case "", corev1.TolerationOpEqual, corev1.TolerationOpExists:
		default:
			errs = append(errs, field.NotSupported(tp.Child("operator"), t.Operator, []corev1.TolerationOperator{corev1.TolerationOpEqual, corev1.TolerationOpExists}))
		}
		if t.Operator == corev1.TolerationOpExists && t.Value != "" {
			errs = append(errs, field.Invalid(tp.Child("value"), t.Value, "must be empty when operator is Exists"))
		}
		switch t.Effect {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			errs = append(errs, field.NotSupported(tp.Child("effect"), t.Effect, []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}))
		}
	}
	for i, c := range s.TopologySpreadConstraints {
		cp := path.Child("topologySpreadConstraints").Index(i)
		if c.MaxSkew < 1 {
			errs = append(errs, field.Invalid(cp.Child("maxSkew"), c.MaxSkew, "must be greater than or equal to 1"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(cp.Child("topologyKey"), ""))
		}
		switch c.WhenUnsatisfiable {
		case corev1.DoNotSchedule, corev1.ScheduleAnyway:
		default:
			errs = append(errs, field.NotSupported(cp.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, []corev1.UnsatisfiableConstraintAction{corev1.DoNotSchedule, corev1.ScheduleAnyway}))
		}
	}
	return errs
}

// validateEnv checks the ConfigMaps and Secrets envFrom and
// env[].valueFrom name (the app's at path, a sidecar's at its own), where
// the API server would refuse the workload or stackdome could not relate
// them: one source an envFrom entry, a DNS-subdomain name, a key for a
// valueFrom, and rollOnChange only where there is content to follow.
func validateEnv(envFrom []EnvFromSource, env []EnvVar, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	name := func(p *field.Path, n string) {
		if n == "" {
			errs = append(errs, field.Required(p, ""))
			return
		}
		for _, msg := range validation.IsDNS1123Subdomain(n) {
			errs = append(errs, field.Invalid(p, n, msg))
		}
	}
	for i, e := range envFrom {
		ep := path.Child("envFrom").Index(i)
		switch {
		case (e.ConfigMapRef == nil) == (e.SecretRef == nil):
			errs = append(errs, field.Invalid(ep, e.Prefix, "takes exactly one of configMapRef and secretRef"))
		case e.ConfigMapRef != nil:
			name(ep.Child("configMapRef", "name"), e.ConfigMapRef.Name)
		default:
			name(ep.Child("secretRef", "name"), e.SecretRef.Name)
		}
	}
	for i, e := range env {
		vp := path.Child("env").Index(i).Child("valueFrom")
		var ref bool
		if v := e.ValueFrom; v != nil {
			if r := v.ConfigMapKeyRef; r != nil {
				ref = true
				name(vp.Child("configMapKeyRef", "name"), r.Name)
				if r.Key == "" {
					errs = append(errs, field.Required(vp.Child("configMapKeyRef", "key"), ""))
				}
			}
			if r := v.SecretKeyRef; r != nil {
				ref = true
				name(vp.Child("secretKeyRef", "name"), r.Name)
				if r.Key == "" {
					errs = append(errs, field.Required(vp.Child("secretKeyRef", "key"), ""))
				}
			}
		}
		if e.RollOnChange != nil && !ref {
			errs = append(errs, field.Forbidden(path.Child("env").Index(i).Child("rollOnChange"), "needs a valueFrom.configMapKeyRef or valueFrom.secretKeyRef: there is no content to follow"))
		}
	}
	return errs
}
