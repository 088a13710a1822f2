package schema

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// reservedPodLabels are the labels the workload and its Service select the
// pods by, and those the workload controllers set.
var reservedPodLabels = []string{LabelName, LabelInstance, LabelManagedBy,
	LabelPodTemplateHash, LabelControllerRevisionHash, LabelStatefulSetPodName}

// validateRouting checks TLS and the paths public ports are routed at.
func validateRouting(s Spec) []string {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	paths := map[string]string{}
	for i, p := range s.Ports {
		if p.Path != "" {
			if !p.Public {
				add("spec.ports[%d].path is only for a public port", i)
			}
			if !strings.HasPrefix(p.Path, "/") || strings.ContainsAny(p.Path, "`()&| \\\"'") {
				add("spec.ports[%d].path %q must start with / and hold no quotes, spaces, parentheses or operators", i, p.Path)
			}
		}
		if !p.Public {
			continue
		}
		path, _ := s.RoutePath(p)
		if other, ok := paths[path]; ok {
			add("spec.ports[%d] (%s) is routed at %q like %s: public ports need distinct paths", i, p.Name, path, other)
		}
		paths[path] = p.Name
	}
	if t := s.TLS; t != nil {
		if t.SecretName != "" && t.CertResolver != "" {
			add("spec.tls takes secretName or certResolver, not both")
		}
		if t.SecretName != "" {
			for _, msg := range validation.IsDNS1123Subdomain(t.SecretName) {
				add("spec.tls.secretName %q: %s", t.SecretName, msg)
			}
		}
		if strings.ContainsAny(t.CertResolver, "`\"\\") {
			add("spec.tls.certResolver %q holds a quote or backslash", t.CertResolver)
		}
		if len(s.PublicPorts()) == 0 {
			add("spec.tls needs a public port")
		}
	}
	return errs
}

// validatePod checks the pod-level fields where the API server would refuse
// the workload, so that a spec that slipped past admission is reported
// instead of failing every apply. Maps are read in key order: the message
// becomes a status message, which must not change between syncs.
func validatePod(s Spec) []string {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	for i, r := range s.ImagePullSecrets {
		if r.Name == "" {
			add("spec.imagePullSecrets[%d].name is required", i)
		}
	}
	if n := s.ServiceAccountName; n != "" {
		for _, msg := range validation.IsDNS1123Subdomain(n) {
			add("spec.serviceAccountName %q: %s", n, msg)
		}
	}
	errs = append(errs, validateFiles(s)...)
	errs = append(errs, validateConfigRefs(s)...)
	errs = append(errs, validateWritable(s)...)
	errs = append(errs, validateMigration(s)...)
	errs = append(errs, validateTermination(s)...)
	errs = append(errs, validateMetadata(s)...)
	return append(errs, validatePlacement(s)...)
}

// validateFiles checks spec.files: names, mount paths, one source each.
func validateFiles(s Spec) []string {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	names, mounts := map[string]bool{}, map[string]bool{}
	for i, f := range s.Files {
		for _, msg := range validation.IsDNS1123Label("files-" + f.Name) {
			add("spec.files[%d].name %q: %s", i, f.Name, msg)
		}
		if names[f.Name] {
			add("spec.files[%d].name %q: file names must be unique", i, f.Name)
		}
		if !strings.HasPrefix(f.MountPath, "/") || len(f.MountPath) < 2 {
			add("spec.files[%d].mountPath %q must be an absolute path below /", i, f.MountPath)
		}
		if mounts[f.MountPath] || (s.Storage != nil && s.Storage.MountPath == f.MountPath) {
			add("spec.files[%d].mountPath %q is already mounted", i, f.MountPath)
		}
		names[f.Name], mounts[f.MountPath] = true, true
		switch {
		case (f.ConfigMap == nil) == (f.Secret == nil):
			add("spec.files[%d] takes exactly one of configMap and secret", i)
		case f.ConfigMap != nil && f.ConfigMap.Name == "":
			add("spec.files[%d].configMap.name is required", i)
		case f.Secret != nil && f.Secret.SecretName == "":
			add("spec.files[%d].secret.secretName is required", i)
		}
	}
	return errs
}

// validateMetadata checks the pods' labels and annotations.
func validateMetadata(s Spec) []string {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	for _, k := range slices.Sorted(maps.Keys(s.PodLabels)) {
		v := s.PodLabels[k]
		if slices.Contains(reservedPodLabels, k) {
			add("spec.podLabels cannot set %s: the workload and its Service select the pods by it", k)
		}
		for _, msg := range validation.IsQualifiedName(k) {
			add("spec.podLabels key %q: %s", k, msg)
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			add("spec.podLabels[%q] value %q: %s", k, v, msg)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.PodAnnotations)) {
		if k == AnnotationRevision {
			add("spec.podAnnotations cannot set %s: stackdome marks the pods of each revision with it", k)
		}
		if k == AnnotationConfigDigest {
			add("spec.podAnnotations cannot set %s: stackdome rolls the pods with it when their ConfigMaps and Secrets change", k)
		}
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			add("spec.podAnnotations key %q: %s", k, msg)
		}
	}
	return errs
}

// validatePlacement checks the node selector, tolerations and spread
// constraints where the API server would refuse the workload.
func validatePlacement(s Spec) []string {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	for _, k := range slices.Sorted(maps.Keys(s.NodeSelector)) {
		v := s.NodeSelector[k]
		for _, msg := range validation.IsQualifiedName(k) {
			add("spec.nodeSelector key %q: %s", k, msg)
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			add("spec.nodeSelector[%q] value %q: %s", k, v, msg)
		}
	}
	for i, t := range s.Tolerations {
		switch t.Operator {
		case "", corev1.TolerationOpEqual, corev1.TolerationOpExists:
		default:
			add("spec.tolerations[%d].operator %q must be Equal or Exists", i, t.Operator)
		}
		if t.Operator == corev1.TolerationOpExists && t.Value != "" {
			add("spec.tolerations[%d]: operator Exists takes no value", i)
		}
		switch t.Effect {
		case "", corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		default:
			add("spec.tolerations[%d].effect %q must be NoSchedule, PreferNoSchedule or NoExecute", i, t.Effect)
		}
	}
	for i, c := range s.TopologySpreadConstraints {
		if c.MaxSkew < 1 {
			add("spec.topologySpreadConstraints[%d].maxSkew %d must be at least 1", i, c.MaxSkew)
		}
		if c.TopologyKey == "" {
			add("spec.topologySpreadConstraints[%d].topologyKey is required", i)
		}
		switch c.WhenUnsatisfiable {
		case corev1.DoNotSchedule, corev1.ScheduleAnyway:
		default:
			add("spec.topologySpreadConstraints[%d].whenUnsatisfiable %q must be DoNotSchedule or ScheduleAnyway", i, c.WhenUnsatisfiable)
		}
	}
	return errs
}
