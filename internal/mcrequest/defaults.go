package mcrequest

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The API server's defaults, stated once: what kube-apiserver v1.37 writes
// into a child stackdome did not set, on create. Kubernetes' own defaulting
// functions live in k8s.io/kubernetes, which is not importable; each one
// below cites the function of kubernetes/kubernetes@v1.37.2 it restates:
//
//	pkg/apis/core/v1/defaults.go   SetDefaults_Container, _Probe, _HTTPGetAction,
//	                               _PodSpec, _ObjectFieldSelector, the volume
//	                               sources' DefaultMode, _Service, _ServicePort,
//	                               _PersistentVolumeClaimSpec
//	pkg/apis/apps/v1/defaults.go   SetDefaults_Deployment, _StatefulSet
//	pkg/apis/batch/v1/defaults.go  SetDefaults_Job, _CronJob
//	pkg/registry/batch/job/strategy.go         the generated selector and its labels
//	pkg/registry/core/service/ipallocator      the ClusterIP (here a stand-in
//	                                            address derived from the name)
//	pkg/registry/core/service/storage/alloc.go the IP families, of a single-stack
//	                                            IPv4 cluster
//
// Only the kinds whose defaults the fixtures carry are defaulted: Service,
// Deployment, StatefulSet, Job and CronJob. The e2e
// (e2e/node/fixtures_wire_test.go) checks each default written here against what
// the real API server stored.

// Default writes the API server's defaults into o, a stored object of one of
// the kinds above; other kinds are left as they are.
func Default(o Object) {
	switch Str(o, "kind") {
	case "Deployment":
		typed(o, "spec", func(s *appsv1.DeploymentSpec) { deployment(s) })
	case "StatefulSet":
		typed(o, "spec", func(s *appsv1.StatefulSetSpec) { statefulSet(s) })
	case "Job":
		typed(o, "spec", func(s *batchv1.JobSpec) { job(s, Str(o, "metadata", "uid"), Name(o)) })
	case "CronJob":
		typed(o, "spec", func(s *batchv1.CronJobSpec) { cronJob(s) })
	case "Service":
		typed(o, "spec", func(s *corev1.ServiceSpec) { service(s, Name(o)) })
		o["status"] = map[string]any{"loadBalancer": map[string]any{}}
	}
}

// typed decodes o[field] into T, lets set default it and stores it back.
func typed[T any](o Object, field string, set func(*T)) {
	var v T
	b, err := json.Marshal(o[field])
	if err == nil {
		err = json.Unmarshal(b, &v)
	}
	if err != nil {
		panic(fmt.Sprintf("mcrequest: %s of %s %s: %v", field, Str(o, "kind"), Name(o), err))
	}
	set(&v)
	o[field] = ToObject(v)
}

// SetDefaults_Deployment (apps/v1): replicas 1, RollingUpdate 25%/25%,
// revisionHistoryLimit 10, progressDeadlineSeconds 600.
func deployment(s *appsv1.DeploymentSpec) {
	orDefault(&s.Replicas, 1)
	if s.Strategy.Type == "" {
		s.Strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if s.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType && s.Strategy.RollingUpdate == nil {
		q := intstr.FromString("25%")
		s.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: &q, MaxUnavailable: &q}
	}
	orDefault(&s.RevisionHistoryLimit, 10)
	orDefault(&s.ProgressDeadlineSeconds, 600)
	podSpec(&s.Template.Spec)
}

// SetDefaults_StatefulSet (apps/v1): replicas 1, OrderedReady,
// RollingUpdate with partition 0 and maxUnavailable 1, Retain on delete and scale, revision
// history 10; each claim template a v1 PersistentVolumeClaim, Filesystem,
// Pending.
func statefulSet(s *appsv1.StatefulSetSpec) {
	orDefault(&s.Replicas, 1)
	if s.PodManagementPolicy == "" {
		s.PodManagementPolicy = appsv1.OrderedReadyPodManagement
	}
	if s.UpdateStrategy.Type == "" {
		s.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
	}
	if s.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType {
		if s.UpdateStrategy.RollingUpdate == nil {
			s.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{}
		}
		orDefault(&s.UpdateStrategy.RollingUpdate.Partition, 0)
		if s.UpdateStrategy.RollingUpdate.MaxUnavailable == nil { // MaxUnavailableStatefulSet, on in v1.37
			one := intstr.FromInt32(1)
			s.UpdateStrategy.RollingUpdate.MaxUnavailable = &one
		}
	}
	if s.PersistentVolumeClaimRetentionPolicy == nil {
		s.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{
			WhenDeleted: appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
			WhenScaled:  appsv1.RetainPersistentVolumeClaimRetentionPolicyType,
		}
	}
	orDefault(&s.RevisionHistoryLimit, 10)
	for i := range s.VolumeClaimTemplates {
		c := &s.VolumeClaimTemplates[i]
		c.APIVersion, c.Kind = "v1", "PersistentVolumeClaim"
		if c.Spec.VolumeMode == nil {
			c.Spec.VolumeMode = ptr(corev1.PersistentVolumeFilesystem)
		}
		if c.Status.Phase == "" {
			c.Status.Phase = corev1.ClaimPending
		}
	}
	podSpec(&s.Template.Spec)
}

// SetDefaults_Job (batch/v1) and the Job strategy's PrepareForCreate: one
// completion, NonIndexed, backoffLimit 6, podReplacementPolicy
// TerminatingOrFailed, not suspended, and the selector the API server
// generates (manualSelector false): the Job's uid as
// batch.kubernetes.io/controller-uid, on the pods' labels too with the
// Job's name and their legacy spellings.
func job(s *batchv1.JobSpec, uid, name string) {
	jobSpec(s)
	s.ManualSelector = ptr(false)
	s.Selector = selector(map[string]string{"batch.kubernetes.io/controller-uid": uid})
	if s.Template.Labels == nil {
		s.Template.Labels = map[string]string{}
	}
	for k, v := range map[string]string{"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
		"controller-uid": uid, "job-name": name} {
		s.Template.Labels[k] = v
	}
}

func jobSpec(s *batchv1.JobSpec) {
	orDefault(&s.Completions, 1)
	orDefault(&s.Parallelism, 1)
	orDefault(&s.BackoffLimit, 6)
	if s.CompletionMode == nil {
		s.CompletionMode = ptr(batchv1.NonIndexedCompletion)
	}
	if s.PodReplacementPolicy == nil {
		s.PodReplacementPolicy = ptr(batchv1.TerminatingOrFailed)
	}
	if s.Suspend == nil {
		s.Suspend = ptr(false)
	}
	podSpec(&s.Template.Spec)
}

// SetDefaults_CronJob (batch/v1): Allow, not suspended, 3 successful and 1
// failed Jobs kept; its job template defaulted as a Job's spec.
func cronJob(s *batchv1.CronJobSpec) {
	if s.ConcurrencyPolicy == "" {
		s.ConcurrencyPolicy = batchv1.AllowConcurrent
	}
	orDefault(&s.SuccessfulJobsHistoryLimit, 3)
	orDefault(&s.FailedJobsHistoryLimit, 1)
	jobSpec(&s.JobTemplate.Spec)
}

// SetDefaults_Service and SetDefaults_ServicePort (core/v1), and the
// allocators' answer on a single-stack IPv4 cluster: type ClusterIP,
// sessionAffinity None, internalTrafficPolicy Cluster, one IPv4 family, a
// ClusterIP (unless headless), each port TCP with targetPort its port.
func service(s *corev1.ServiceSpec, name string) {
	if s.Type == "" {
		s.Type = corev1.ServiceTypeClusterIP
	}
	if s.SessionAffinity == "" {
		s.SessionAffinity = corev1.ServiceAffinityNone
	}
	if s.InternalTrafficPolicy == nil {
		s.InternalTrafficPolicy = ptr(corev1.ServiceInternalTrafficPolicyCluster)
	}
	if s.ClusterIP == "" {
		s.ClusterIP = fmt.Sprintf("10.96.%d.%d", len(name)%250, 10+len(name))
	}
	s.ClusterIPs = []string{s.ClusterIP}
	s.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	if s.IPFamilyPolicy == nil {
		s.IPFamilyPolicy = ptr(corev1.IPFamilyPolicySingleStack)
		if s.ClusterIP == corev1.ClusterIPNone && len(s.Selector) == 0 {
			// A headless Service without a selector takes every family of
			// the cluster (pkg/registry/core/service/storage/alloc.go,
			// initIPFamilyFields); the fixtures' cluster has IPv4 only.
			s.IPFamilyPolicy = ptr(corev1.IPFamilyPolicyRequireDualStack)
		}
	}
	for i := range s.Ports {
		p := &s.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort.IntVal == 0 && p.TargetPort.StrVal == "" {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
}

func orDefault[T comparable](p **T, def T) {
	if *p == nil {
		*p = &def
	}
}

func ptr[T any](v T) *T { return &v }

func selector(labels map[string]string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: labels}
}
