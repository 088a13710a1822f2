package schema

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// AnnotationConfigDigest is the pod-template annotation holding the digest
// of the ConfigMaps and Secrets the pods follow: when their content
// changes, the template changes, and the workload rolls.
const AnnotationConfigDigest = "stackdome.io/config-digest"

// EnvFromSource is a Kubernetes envFrom entry, with the same fields on the
// wire, plus RollOnChange.
type EnvFromSource struct {
	corev1.EnvFromSource `json:",inline"`
	// RollOnChange rolls the pods when the content of the ConfigMap or
	// Secret changes (default true). False: running pods keep the
	// environment they started with until they are replaced for another
	// reason.
	// +optional
	RollOnChange *bool `json:"rollOnChange,omitempty"`
}

// EnvVar is a Kubernetes env entry, with the same fields on the wire, plus
// RollOnChange, which only a valueFrom naming a ConfigMap or Secret key
// reads.
type EnvVar struct {
	corev1.EnvVar `json:",inline"`
	// RollOnChange rolls the pods when the content of the ConfigMap or
	// Secret valueFrom names changes (default true).
	// +optional
	RollOnChange *bool `json:"rollOnChange,omitempty"`
}

// Kinds a ConfigRef names.
const (
	KindConfigMap = "ConfigMap"
	KindSecret    = "Secret"
)

// ConfigRef is a ConfigMap or Secret of the app's namespace the spec uses
// (files, envFrom, env[].valueFrom), merged over every reference to it:
// Roll when one reference rolls the pods on a change of its content,
// Optional when every reference is optional (the pods start without it).
type ConfigRef struct {
	Kind     string
	Name     string
	Optional bool
	Roll     bool
}

// ConfigRefs are the ConfigMaps and Secrets the spec uses (the sidecars'
// env and envFrom included), each once,
// sorted by kind then name. References without a name are left out
// (Validate refuses them).
func (s Spec) ConfigRefs() []ConfigRef {
	var refs []ConfigRef
	add := func(kind, name string, optional *bool, roll *bool) {
		if name == "" {
			return
		}
		r := ConfigRef{Kind: kind, Name: name, Optional: optional != nil && *optional, Roll: roll == nil || *roll}
		for i := range refs {
			if refs[i].Kind == kind && refs[i].Name == name {
				refs[i].Optional = refs[i].Optional && r.Optional
				refs[i].Roll = refs[i].Roll || r.Roll
				return
			}
		}
		refs = append(refs, r)
	}
	for _, f := range s.Files {
		if f.ConfigMap != nil {
			add(KindConfigMap, f.ConfigMap.Name, f.ConfigMap.Optional, f.RollOnChange)
		}
		if f.Secret != nil {
			add(KindSecret, f.Secret.SecretName, f.Secret.Optional, f.RollOnChange)
		}
	}
	sidecarEnv, sidecarEnvFrom := s.sidecarEnv()
	for _, e := range append(slices.Clone(s.EnvFrom), sidecarEnvFrom...) {
		if e.ConfigMapRef != nil {
			add(KindConfigMap, e.ConfigMapRef.Name, e.ConfigMapRef.Optional, e.RollOnChange)
		}
		if e.SecretRef != nil {
			add(KindSecret, e.SecretRef.Name, e.SecretRef.Optional, e.RollOnChange)
		}
	}
	for _, e := range append(slices.Clone(s.Env), sidecarEnv...) {
		if e.ValueFrom == nil {
			continue
		}
		if r := e.ValueFrom.ConfigMapKeyRef; r != nil {
			add(KindConfigMap, r.Name, r.Optional, e.RollOnChange)
		}
		if r := e.ValueFrom.SecretKeyRef; r != nil {
			add(KindSecret, r.Name, r.Optional, e.RollOnChange)
		}
	}
	slices.SortFunc(refs, func(a, b ConfigRef) int {
		if c := strings.Compare(a.Kind, b.Kind); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return refs
}

// ConfigNames are the names of the ConfigRefs of kind, sorted.
func (s Spec) ConfigNames(kind string) []string {
	var out []string
	for _, r := range s.ConfigRefs() {
		if r.Kind == kind {
			out = append(out, r.Name)
		}
	}
	return out
}

// CoreEnvFrom is spec.envFrom as the container takes it.
func (s Spec) CoreEnvFrom() []corev1.EnvFromSource {
	if s.EnvFrom == nil {
		return nil
	}
	out := make([]corev1.EnvFromSource, len(s.EnvFrom))
	for i, e := range s.EnvFrom {
		out[i] = e.EnvFromSource
	}
	return out
}

// CoreEnv is spec.env as the container takes it.
func (s Spec) CoreEnv() []corev1.EnvVar {
	if s.Env == nil {
		return nil
	}
	out := make([]corev1.EnvVar, len(s.Env))
	for i, e := range s.Env {
		out[i] = e.EnvVar
	}
	return out
}
