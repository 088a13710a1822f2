package children

import (
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/stackdome/stackdome/schema"
)

// disruptionBudget is the PodDisruptionBudget of a spec that runs at least
// two pods (Spec.MinPods): a drain, a node upgrade or the cluster autoscaler
// evicts one of them at a time (maxUnavailable: 1), so the app keeps serving
// while the next pod comes up. It is nil below two pods, where a budget of
// one unavailable pod protects nothing (and minAvailable: 1 would block
// every drain of the node); Metacontroller deletes the budget once it is no
// longer returned. maxUnavailable rather than minAvailable: it follows
// scaling by kubectl or the autoscaler without a sync.
func disruptionBudget(name string, spec schema.Spec) *policyv1.PodDisruptionBudget {
	if spec.MinPods() < 2 {
		return nil
	}
	one := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: objectMeta(name, name),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: &one,
			Selector:       &metav1.LabelSelector{MatchLabels: Selector(name)},
		},
	}
}
