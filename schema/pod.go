package schema

import corev1 "k8s.io/api/core/v1"

// Pod is what a StackResource says about its pods beyond the app container's
// image and command: identity, configuration, security and placement. The
// fields are the Kubernetes ones users already know, with the same shapes.
type Pod struct {
	// ImagePullSecrets name Secrets of the namespace holding registry
	// credentials for the image.
	// +listType=atomic
	// +optional
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// ServiceAccountName is the pods' identity; the namespace's default when
	// empty.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty"`

	// EnvFrom adds every key of ConfigMaps or Secrets to the app container's
	// environment. The pods roll when the content of one changes, unless
	// its rollOnChange is false. On an install that does not relate
	// Secrets (ConfigMaps) — chart relate.secrets (relate.configMaps)
	// false — a change of one never rolls the pods (status: Config
	// Unknown NotWatched): kubectl rollout restart applies it.
	// +listType=atomic
	// +optional
	EnvFrom []EnvFromSource `json:"envFrom,omitempty"`

	// Files mounts keys of ConfigMaps or Secrets into the app container,
	// read-only. The pods roll when the names they refer to change, and
	// when the content of a ConfigMap or Secret changes unless the file's
	// rollOnChange is false. On an install that does not relate
	// Secrets (ConfigMaps) — chart relate.secrets (relate.configMaps)
	// false — a change of one never rolls the pods (status: Config
	// Unknown NotWatched): kubectl rollout restart applies it.
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(f, self.exists_one(g, g.name == f.name))",message="file names must be unique"
	// +kubebuilder:validation:XValidation:rule="self.all(f, self.exists_one(g, g.mountPath == f.mountPath))",message="file mountPaths must be unique"
	// +listType=atomic
	// +optional
	Files []File `json:"files,omitempty"`

	// Scratch mounts writable, size-limited directories of the node's disk
	// (/tmp, caches), empty at every pod start. At most 8: the CEL rule on
	// each sizeLimit is costed per item, and 16 exceed the API server's
	// budget.
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:XValidation:rule="self.all(v, self.exists_one(w, w.name == v.name))",message="scratch names must be unique"
	// +kubebuilder:validation:XValidation:rule="self.all(v, self.exists_one(w, w.mountPath == v.mountPath))",message="scratch mountPaths must be unique"
	// +listType=atomic
	// +optional
	Scratch []Scratch `json:"scratch,omitempty"`

	// Shm mounts a memory-backed /dev/shm of this size.
	// +optional
	Shm *Shm `json:"shm,omitempty"`

	// Migration runs a step to completion before the app starts, in every
	// pod: an init container of the app's image with its own command.
	// +optional
	Migration *Migration `json:"migration,omitempty"`

	// DrainSeconds is how long a terminating pod keeps serving before its
	// app gets SIGTERM (a preStop sleep, which needs no shell in the image):
	// the time Traefik and every Service proxy take to stop sending it
	// requests. Default 5 for an app with ports, none without; 0 turns it
	// off.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=300
	// +optional
	DrainSeconds *int32 `json:"drainSeconds,omitempty"`

	// TerminationGracePeriodSeconds is the time from a pod's deletion until
	// its containers are killed, drain included; the API server's 30 when
	// unset. It must exceed DrainSeconds.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`

	// PodSecurityContext relaxes, field by field, the pod's security context,
	// which by default meets Pod Security "restricted": runAsNonRoot and the
	// RuntimeDefault seccomp profile.
	// +optional
	PodSecurityContext *corev1.PodSecurityContext `json:"podSecurityContext,omitempty"`

	// SecurityContext relaxes, field by field, the app container's security
	// context, which by default meets Pod Security "restricted": no
	// privilege escalation and every capability dropped.
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`

	// NodeSelector keeps the pods on nodes with these labels.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations let the pods run on nodes with these taints.
	// +listType=atomic
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// Affinity places the pods relative to nodes and other pods.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// TopologySpreadConstraints spread the pods across zones or nodes. A
	// constraint without a labelSelector counts this app's pods.
	// +listType=atomic
	// +optional
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty"`

	// PodAnnotations are added to the pods (Prometheus scraping, sidecar
	// injection). stackdome.io/revision and stackdome.io/config-digest are
	// stackdome's.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	PodAnnotations map[string]string `json:"podAnnotations,omitempty"`

	// PodLabels are added to the pods. The labels stackdome selects its pods
	// by, and those the workload controllers set, are theirs.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	PodLabels map[string]string `json:"podLabels,omitempty"`
}

// File mounts the keys of one ConfigMap or Secret, read-only, as files in a
// directory of the app container.
//
// +kubebuilder:validation:XValidation:rule="has(self.configMap) != has(self.secret)",message="a file takes exactly one of configMap and secret"
// +kubebuilder:validation:XValidation:rule="!has(self.configMap) || (has(self.configMap.name) && size(self.configMap.name) > 0)",fieldPath=".configMap.name",reason=FieldValueRequired,message="the ConfigMap's name"
// +kubebuilder:validation:XValidation:rule="!has(self.secret) || (has(self.secret.secretName) && size(self.secret.secretName) > 0)",fieldPath=".secret.secretName",reason=FieldValueRequired,message="the Secret's name"
type File struct {
	// Name names the volume (files-<name>): a DNS label.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=57
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Name string `json:"name"`
	// MountPath is the directory the keys appear in.
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^/`
	MountPath string `json:"mountPath"`
	// ConfigMap is the ConfigMap whose keys (all, or Items) become files.
	// +optional
	ConfigMap *corev1.ConfigMapVolumeSource `json:"configMap,omitempty"`
	// Secret is the Secret whose keys (all, or Items) become files.
	// +optional
	Secret *corev1.SecretVolumeSource `json:"secret,omitempty"`
	// RollOnChange rolls the pods when the content of the ConfigMap or
	// Secret changes (default true). False: running pods keep the content
	// they started with until they are replaced for another reason (the
	// kubelet still refreshes the mounted files in place).
	// +optional
	RollOnChange *bool `json:"rollOnChange,omitempty"`
}
