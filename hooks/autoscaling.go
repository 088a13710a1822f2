package hooks

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/schema"
)

// autoscaler is the HorizontalPodAutoscaler of a spec with autoscaling: it
// scales the workload on CPU utilization. The workload carries no replicas
// then, so that neither the autoscaler's count nor `kubectl scale` is undone
// by the next sync (Metacontroller applies only the fields returned).
func autoscaler(name string, spec schema.Spec) *autoscalingv2.HorizontalPodAutoscaler {
	a := spec.Autoscaling
	kind := "Deployment"
	if spec.Type == schema.TypeStatefulService {
		kind = "StatefulSet"
	}
	return &autoscalingv2.HorizontalPodAutoscaler{
		TypeMeta:   metav1.TypeMeta{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"},
		ObjectMeta: objectMeta(name, name),
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: kind, Name: name},
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
