package status

import (
	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// Which pods a status speaks of: those made from the spec revision, and
// among them those of the workload revision they run.

// currentPods are the pods of spec revision specRev, in the order given (by name).
func currentPods(pods []observed.Related, specRev string) []*observed.Related {
	var out []*observed.Related
	for i := range pods {
		if pods[i].Metadata.Annotations[schema.AnnotationRevision] == specRev {
			out = append(out, &pods[i])
		}
	}
	return out
}

// revisionLabel is the pod label that names the workload revision for w.
func revisionLabel(w *observed.Child) string {
	if w != nil && w.Kind == schema.KindStatefulSet {
		return schema.LabelControllerRevisionHash
	}
	return schema.LabelPodTemplateHash
}

// workloadRevision is the workload revision the pods of the spec run: a
// StatefulSet's updateRevision once it has taken the spec; else the revision
// label of the newest pod of the spec (a rollout restart makes new pods of
// the same spec under a new ReplicaSet); else the spec revision itself. Every
// verdict, window and condemnation belongs to it.
func workloadRevision(w *observed.Child, current []*observed.Related, specRev string) string {
	if w != nil && w.Kind == schema.KindStatefulSet && w.Status.UpdateRevision != "" && w.Spec.Template.Metadata.Annotations[schema.AnnotationRevision] == specRev {
		return w.Status.UpdateRevision
	}
	label := revisionLabel(w)
	var newest *observed.Related
	for _, p := range current {
		if p.Metadata.Labels[label] == "" {
			continue
		}
		if newest == nil || p.Metadata.CreationTimestamp.After(newest.Metadata.CreationTimestamp.Time) ||
			(p.Metadata.CreationTimestamp.Equal(&newest.Metadata.CreationTimestamp) && p.Metadata.Name > newest.Metadata.Name) {
			newest = p
		}
	}
	if newest == nil {
		return specRev
	}
	return newest.Metadata.Labels[label]
}

// ofRevision keeps the pods that run workload revision workloadRev; a pod
// without the revision label is kept (nothing says it is of another
// revision).
func ofRevision(pods []*observed.Related, w *observed.Child, workloadRev string) []*observed.Related {
	label := revisionLabel(w)
	out := pods[:0:0]
	for _, p := range pods {
		if h := p.Metadata.Labels[label]; h == "" || h == workloadRev {
			out = append(out, p)
		}
	}
	return out
}

// replicas is how many pods the workload should run: the spec's, or under
// autoscaling the workload's own count, which the autoscaler sets (its
// minimum until the workload says).
func (f *facts) replicas() int32 {
	if f.spec.Replicas != nil {
		return *f.spec.Replicas
	}
	if w := f.workload; w != nil && w.Spec.Replicas != nil {
		return *w.Spec.Replicas
	}
	if a := f.spec.Autoscaling; a != nil && a.MinReplicas != nil {
		return *a.MinReplicas
	}
	return schema.DefaultReplicas
}
