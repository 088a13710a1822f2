package children

import (
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/schema"
)

// The workload of a spec — a Deployment, or a StatefulSet with its claim
// template — and its autoscaler.

func deployment(name string, spec schema.Spec, tmpl corev1.PodTemplateSpec) *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: schema.KindDeployment},
		ObjectMeta: objectMeta(name, name),
		Spec: appsv1.DeploymentSpec{
			Replicas: spec.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: Selector(name)},
			Template: tmpl,
		},
	}
}

// keepClaims replaces the canonical StatefulSet's claim templates with the
// observed ones it must keep.
func keepClaims(ss object, kept []any) {
	spec := ss["spec"].(object)
	delete(spec, "volumeClaimTemplates")
	if len(kept) > 0 {
		spec["volumeClaimTemplates"] = kept
	}
}
func statefulSet(name string, spec schema.Spec, tmpl corev1.PodTemplateSpec) *appsv1.StatefulSet {
	ss := &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: schema.KindStatefulSet},
		ObjectMeta: objectMeta(name, name),
		Spec: appsv1.StatefulSetSpec{
			Replicas:    spec.Replicas,
			ServiceName: schema.HeadlessName(name),
			Selector:    &metav1.LabelSelector{MatchLabels: Selector(name)},
			Template:    tmpl,
		},
	}
	if st := spec.Storage; st != nil {
		// Metacontroller's dynamic apply replaces volumeClaimTemplates as a
		// whole list, so each template says everything the API server stores
		// in it — apiVersion, kind, volumeMode and status.phase (seen on a
		// real kube-apiserver v1.37) — or the StatefulSet is updated on
		// every sync.
		fs := corev1.PersistentVolumeFilesystem
		pvc := corev1.PersistentVolumeClaim{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
			Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimPending},
			ObjectMeta: metav1.ObjectMeta{Name: dataVolume},
			Spec: corev1.PersistentVolumeClaimSpec{
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				VolumeMode:  &fs,
				Resources: corev1.VolumeResourceRequirements{
					Requests: corev1.ResourceList{corev1.ResourceStorage: st.Size},
				},
			},
		}
		if st.StorageClassName != "" {
			pvc.Spec.StorageClassName = &st.StorageClassName
		}
		ss.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{pvc}
	}
	return ss
}

// autoscaler is the HorizontalPodAutoscaler of a spec with autoscaling: it
// scales the workload on CPU utilization. The workload carries no replicas
// then, so that neither the autoscaler's count nor `kubectl scale` is undone
// by the next sync (Metacontroller applies only the fields returned).
func autoscaler(name string, spec schema.Spec) *autoscalingv2.HorizontalPodAutoscaler {
	a := spec.Autoscaling
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: objectMeta(name, name),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: spec.WorkloadKind(), Name: name},
			MinReplicas:    a.MinReplicas,
			MaxReplicas:    a.MaxReplicas,
			Metrics: []autoscalingv2.MetricSpec{{
				Type: autoscalingv2.ResourceMetricSourceType,
				Resource: &autoscalingv2.ResourceMetricSource{
					Name:   "cpu",
					Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: a.TargetCPUUtilizationPercentage},
				},
			}},
		},
	}
}
