package schema

// Autoscaling makes a HorizontalPodAutoscaler (autoscaling/v2) scale the
// workload on CPU utilization. The workload then carries no replicas, so
// neither the autoscaler's count nor `kubectl scale` is undone by a sync.
//
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",fieldPath=".maxReplicas",message="autoscaling.minReplicas must not exceed maxReplicas"
type Autoscaling struct {
	// MinReplicas is the fewest pods; default 1.
	// +kubebuilder:validation:Minimum=1
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`
	// MaxReplicas is the most pods.
	// +kubebuilder:validation:Minimum=1
	MaxReplicas int32 `json:"maxReplicas"`
	// TargetCPUUtilizationPercentage is the average CPU use, in percent of
	// resources.requests.cpu, the autoscaler aims at; default 80.
	// +kubebuilder:validation:Minimum=1
	// +optional
	TargetCPUUtilizationPercentage *int32 `json:"targetCPUUtilizationPercentage,omitempty"`
}

// Autoscaling defaults.
const (
	DefaultMinReplicas int32 = 1
	DefaultTargetCPU   int32 = 80
)

// TLS serves a StackResource's public routes over TLS with Traefik's own
// names: a certificate from a Secret, or from a certificate resolver. With
// neither, the cluster's default resolver (stackdome's --tls-cert-resolver)
// applies, or else the entry point's default certificate.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.secretName) && has(self.certResolver))",fieldPath=".certResolver",reason=FieldValueForbidden,message="tls takes secretName or certResolver, not both"
type TLS struct {
	// SecretName is a kubernetes.io/tls Secret of the namespace.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	SecretName string `json:"secretName,omitempty"`
	// CertResolver is a Traefik certificate resolver (ACME).
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:XValidation:rule="!self.contains('`') && !self.contains('\"') && !self.contains('\\\\')",message="must hold no quote, backquote or backslash"
	// +optional
	CertResolver string `json:"certResolver,omitempty"`
}

// MinPods is the fewest pods a defaulted or undefaulted spec asks for:
// autoscaling's minReplicas (1 when unset), else replicas (1 when unset).
func (s Spec) MinPods() int32 {
	if a := s.Autoscaling; a != nil {
		if a.MinReplicas != nil {
			return *a.MinReplicas
		}
		return DefaultMinReplicas
	}
	if s.Replicas != nil {
		return *s.Replicas
	}
	return DefaultReplicas
}
