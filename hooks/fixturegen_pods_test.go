package hooks

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/stackdome/stackdome/internal/mcrequest"
)

// The pods, as their controllers (a ReplicaSet, a StatefulSet, a Job) make
// them and the kubelet reports them.

// templateHash is a pod-template-hash as the Deployment controller writes
// it (its alphabet, 9 or 10 characters), derived from stackdome's revision
// so that fixtures are stable. It is never the revision itself: the
// controller hashes the stored template, not ours.
func templateHash(rev string) string {
	const alphabet = "bcdfghjklmnpqrstvwxz2456789"
	n, err := strconv.ParseUint(rev, 16, 64)
	if err != nil {
		panic(fmt.Sprintf("revision %q: %v", rev, err))
	}
	out := ""
	for n > 0 && len(out) < 10 {
		out += string(alphabet[n%uint64(len(alphabet))])
		n /= uint64(len(alphabet))
	}
	return out
}

// revisionOf is the stackdome revision on a workload's pod template.
func revisionOf(workload mcrequest.Object) string {
	return mcrequest.Str(workload, "spec", "template", "metadata", "annotations", "stackdome.io/revision")
}

// template is a workload's (or a Job's) pod template, typed.
func template(workload mcrequest.Object) corev1.PodTemplateSpec {
	var t corev1.PodTemplateSpec
	roundTripInto(mcrequest.Map(workload, "spec", "template"), &t)
	return t
}

// podSpecOf is the pod spec the API server stores for a pod of template t:
// the admission plugins' and the scheduler's additions.
func podSpecOf(t corev1.PodTemplateSpec) corev1.PodSpec {
	s := *t.Spec.DeepCopy()
	s.EnableServiceLinks = ptr(true)
	s.NodeName = "node-1"
	s.PreemptionPolicy = ptr(corev1.PreemptLowerPriority)
	s.Priority = ptr(int32(0))
	if s.ServiceAccountName == "" {
		s.ServiceAccountName = "default"
	}
	s.DeprecatedServiceAccount = s.ServiceAccountName
	return s
}

func running(image string, ready bool) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: "app", Image: image, Ready: ready, Started: ptr(true),
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: mtime("2026-11-29T11:00:12Z")}}}
}

func waiting(name, image, reason, message string, restarts int32) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: name, Image: image, RestartCount: restarts, Started: ptr(false),
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: message}}}
}

func condition(typ corev1.PodConditionType, status corev1.ConditionStatus, at string) corev1.PodCondition {
	return corev1.PodCondition{Type: typ, Status: status, LastTransitionTime: mtime(at)}
}

// podOpts is how a pod differs from a running, ready one.
type podOpts struct {
	pending    bool                    // not started: ContainerCreating, no IP
	notReady   bool                    // running, not ready
	container  *corev1.ContainerStatus // the app container's status
	readySince string                  // the Ready condition's transition
}

// pod is a pod of workload (a Deployment's template) number n, made by its
// ReplicaSet <parent>-<template hash> and run by the kubelet.
func pod(name string, par, workload mcrequest.Object, ip string, n int, o podOpts) corev1.Pod {
	t := template(workload)
	rev := t.Annotations["stackdome.io/revision"]
	image := t.Spec.Containers[0].Image
	hash := templateHash(rev)
	rs := mcrequest.Name(par) + "-" + hash
	ready := !o.pending && !o.notReady
	st := corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBestEffort, StartTime: ptr(mtime("2026-11-29T11:00:11Z")),
		HostIP: "127.0.0.1", HostIPs: []corev1.HostIP{{IP: "127.0.0.1"}}}
	if o.pending {
		st.Phase = corev1.PodPending
		st.Conditions = []corev1.PodCondition{condition(corev1.PodScheduled, "True", "2026-11-29T11:59:50Z")}
		st.ContainerStatuses = []corev1.ContainerStatus{waiting("app", image, "ContainerCreating", "", 0)}
	} else {
		since := o.readySince
		if since == "" {
			since = "2026-11-29T11:00:20Z"
		}
		rs := map[bool]corev1.ConditionStatus{true: "True", false: "False"}[ready]
		cs := running(image, ready)
		if o.container != nil {
			cs = *o.container
		}
		st.PodIP, st.PodIPs, st.ContainerStatuses = ip, []corev1.PodIP{{IP: ip}}, []corev1.ContainerStatus{cs}
		st.Conditions = []corev1.PodCondition{
			condition("PodReadyToStartContainers", "True", "2026-11-29T11:00:11Z"),
			condition(corev1.PodInitialized, "True", "2026-11-29T11:00:11Z"),
			condition(corev1.PodReady, rs, since),
			condition(corev1.ContainersReady, rs, since),
			condition(corev1.PodScheduled, "True", "2026-11-29T11:00:11Z"),
		}
	}
	labels := map[string]string{"pod-template-hash": hash}
	for k, v := range t.Labels {
		labels[k] = v
	}
	return corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Annotations: map[string]string{"stackdome.io/revision": rev}, CreationTimestamp: mtime("2026-11-29T11:00:10Z"),
			GenerateName: rs + "-", Generation: 1, Labels: labels, Name: name, Namespace: mcrequest.Namespace(par),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", BlockOwnerDeletion: ptr(true), Controller: ptr(true),
				Kind: "ReplicaSet", Name: rs, UID: uidOf(500 + n)}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				entry("v1", "kube-controller-manager", "", "2026-11-29T11:00:10Z",
					`{"f:metadata":{"f:annotations":{".":{},"f:stackdome.io/revision":{}},"f:generateName":{},"f:labels":{".":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{}}}}}`),
				entry("v1", "kubelet", "status", "2026-11-29T11:00:20Z",
					`{"f:status":{"f:conditions":{},"f:containerStatuses":{},"f:phase":{},"f:podIP":{},"f:podIPs":{}}}`),
			},
			ResourceVersion: strconv.Itoa(3000 + n), UID: uidOf(600 + n),
		},
		Spec:   podSpecOf(t),
		Status: st,
	}
}

// statefulPod is pod of a StatefulSet's template: the StatefulSet owns
// it, and labels it with its revision and its name.
func statefulPod(p corev1.Pod, set, revisionHash string) corev1.Pod {
	delete(p.Labels, "pod-template-hash")
	p.Labels["controller-revision-hash"] = revisionHash
	p.Labels["statefulset.kubernetes.io/pod-name"] = p.Name
	p.OwnerReferences[0].Kind, p.OwnerReferences[0].Name = "StatefulSet", set
	return p
}

// jobPod is a pod of job number n as the Job controller and the kubelet
// leave it: Running (exit nil), or Failed (restartPolicy Never) with the
// app's exit code, or Succeeded with 0.
func jobPod(name string, par, job mcrequest.Object, n int, exit *int32, created string) corev1.Pod {
	t := template(job)
	st := corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBestEffort, StartTime: ptr(mtime("2026-11-29T11:30:01Z")),
		HostIP: "127.0.0.1", HostIPs: []corev1.HostIP{{IP: "127.0.0.1"}},
		Conditions: []corev1.PodCondition{condition(corev1.PodScheduled, "True", "2026-11-29T11:30:01Z")}}
	cs := corev1.ContainerStatus{Name: "app", Image: t.Spec.Containers[0].Image, Ready: exit == nil, Started: ptr(exit == nil)}
	var finalizers []string
	if exit == nil {
		cs.State.Running = &corev1.ContainerStateRunning{StartedAt: mtime("2026-11-29T11:30:05Z")}
		finalizers = []string{"batch.kubernetes.io/job-tracking"}
	} else {
		st.Phase, cs.State.Terminated = corev1.PodSucceeded, &corev1.ContainerStateTerminated{ExitCode: *exit, Reason: "Completed",
			StartedAt: mtime("2026-11-29T11:30:05Z"), FinishedAt: mtime("2026-11-29T11:31:00Z"), ContainerID: fmt.Sprintf("containerd://%04x", 0x3a00+n)}
		if *exit != 0 {
			st.Phase, cs.State.Terminated.Reason = corev1.PodFailed, "Error"
		}
	}
	st.ContainerStatuses = []corev1.ContainerStatus{cs}
	if created == "" {
		created = "2026-11-29T11:30:01Z"
	}
	return corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Annotations: t.Annotations, CreationTimestamp: mtime(created),
			GenerateName: mcrequest.Name(job) + "-", Generation: 1, Labels: t.Labels, Name: name, Namespace: mcrequest.Namespace(par),
			Finalizers: finalizers,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", BlockOwnerDeletion: ptr(true), Controller: ptr(true),
				Kind: "Job", Name: mcrequest.Name(job), UID: types.UID(mcrequest.Str(job, "metadata", "uid"))}},
			ResourceVersion: strconv.Itoa(5000 + n), UID: uidOf(800 + n)},
		Spec:   podSpecOf(t),
		Status: st,
	}
}
