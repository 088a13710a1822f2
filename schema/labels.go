package schema

// Labels and annotations on what stackdome makes, and those the workload
// controllers put on pods. The workload and its Service select the pods by
// them, so a spec may set none of them (Validate, and the CRD's CEL rules).
const (
	LabelName      = "app.kubernetes.io/name"
	LabelInstance  = "app.kubernetes.io/instance"
	LabelManagedBy = "app.kubernetes.io/managed-by"
	// ManagedBy is stackdome's value of LabelManagedBy.
	ManagedBy = "stackdome"
	// AnnotationRevision on a pod template (and so on its pods) names the
	// revision of the desired pod template. One rule for Deployments and
	// StatefulSets tells which pods are current.
	AnnotationRevision = "stackdome.io/revision"

	// LabelPodTemplateHash names the ReplicaSet a Deployment's pod runs.
	LabelPodTemplateHash = "pod-template-hash"
	// LabelControllerRevisionHash names the ControllerRevision a
	// StatefulSet's pod runs.
	LabelControllerRevisionHash = "controller-revision-hash"
	// LabelStatefulSetPodName names a StatefulSet's pod.
	LabelStatefulSetPodName = "statefulset.kubernetes.io/pod-name"
)

// ContainerName is the one container of every pod stackdome makes.
const ContainerName = "app"

// The workload kinds a spec runs as (Spec.WorkloadKind).
const (
	KindDeployment  = "Deployment"
	KindStatefulSet = "StatefulSet"
)

// WorkloadKind is the kind of the workload the spec runs as: a StatefulSet
// for a StatefulService, a Job or CronJob for those types, else a
// Deployment.
func (s Spec) WorkloadKind() string {
	switch s.Type {
	case TypeStatefulService:
		return KindStatefulSet
	case TypeJob:
		return KindJob
	case TypeCronJob:
		return KindCronJob
	}
	return KindDeployment
}

// WantsErrorPages reports whether the spec's routes ask for the branded
// error pages: it has public ports and errorPages is on.
func (s Spec) WantsErrorPages() bool {
	return len(s.PublicPorts()) > 0 && s.ErrorPagesEnabled()
}
