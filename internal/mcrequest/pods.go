package mcrequest

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/stackdome/stackdome/metacontroller"
)

// PodShape says what a running pod of an app carries as the API server
// stores it, beyond what every pod has (labels, owner reference, spec with
// the server's and admission's defaults, the kubelet's status with its five
// conditions and a container status).
type PodShape struct {
	// ManagedFields adds the entries kube-controller-manager (the pod's
	// creation) and the kubelet (its status) record: about twice the pod's
	// JSON. Metacontroller sends them as it reads them from its informers.
	ManagedFields bool
	// Ports are the app container's ports, named p0, p1, …; one when empty.
	Ports []int32
}

// RunningPod is pod i of app (the parent's name) in namespace ns, owned by
// its ReplicaSet app-<rev>, labelled as stackdome's children select it, with
// revision rev and pod IP ip: running and ready, as the kubelet reports it
// twenty seconds after its creation. It is built from k8s.io/api types, so
// its JSON is what the API server serves.
func RunningPod(app, ns, rev string, i int, ip string, shape PodShape) Object {
	created := metav1.NewTime(mustTime(ChildCreated).Add(5 * time.Second))
	started := metav1.NewTime(created.Add(time.Second))
	ready := metav1.NewTime(created.Add(10 * time.Second))
	ports := shape.Ports
	if len(ports) == 0 {
		ports = []int32{8080}
	}
	rs := app + "-" + rev
	name := fmt.Sprintf("%s-%05x", rs, i)
	var cports []corev1.ContainerPort
	for j, p := range ports {
		cports = append(cports, corev1.ContainerPort{Name: fmt.Sprintf("p%d", j), ContainerPort: p, Protocol: corev1.ProtocolTCP})
	}
	condition := func(t corev1.PodConditionType, at metav1.Time) corev1.PodCondition {
		return corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: at}
	}
	pod := corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, GenerateName: rs + "-", Namespace: ns,
			UID:               types.UID(UID(0x10000 + i)),
			ResourceVersion:   fmt.Sprint(30000 + i),
			Generation:        1,
			CreationTimestamp: created,
			Labels: map[string]string{
				"app.kubernetes.io/instance": app, "app.kubernetes.io/managed-by": "stackdome",
				"app.kubernetes.io/name": app, "pod-template-hash": rev,
			},
			Annotations: map[string]string{"stackdome.io/revision": rev},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs,
				UID: types.UID(UID(0x0fff0)), Controller: ptr(true), BlockOwnerDeletion: ptr(true)}},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "app", Image: "ghcr.io/acme/" + app + ":1.0.3", Ports: cports,
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(ports[0])}}},
				VolumeMounts:   []corev1.VolumeMount{{Name: "kube-api-access-x7k2p", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
				SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: ptr(false),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
			}},
			NodeName: fmt.Sprintf("node-%d", i%50), ServiceAccountName: "default", DeprecatedServiceAccount: "default",
			EnableServiceLinks: ptr(true), PreemptionPolicy: ptr(corev1.PreemptLowerPriority), Priority: ptr(int32(0)),
			SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr(true),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr(int64(300))},
			},
			Volumes: []corev1.Volume{{Name: "kube-api-access-x7k2p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: ptr(int64(3607)), Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
						Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace",
						FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
				}}}}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				condition("PodReadyToStartContainers", started), condition(corev1.PodInitialized, started),
				condition(corev1.PodReady, ready), condition(corev1.ContainersReady, ready), condition(corev1.PodScheduled, created),
			},
			HostIP: "10.0.0.1", HostIPs: []corev1.HostIP{{IP: "10.0.0.1"}},
			PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
			StartTime: &started,
			QOSClass:  corev1.PodQOSBestEffort,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", Ready: true, Started: ptr(true), RestartCount: 0,
				State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
				Image:       "ghcr.io/acme/" + app + ":1.0.3",
				ImageID:     "ghcr.io/acme/" + app + "@sha256:9b2c5f0e7d4a1c3b8e6f2a9d0c7b4e1f3a8d5c2b9e6f0a3d7c4b1e8f5a2d9c6b",
				ContainerID: fmt.Sprintf("containerd://%064x", 0xc0ffee00+i),
				VolumeMounts: []corev1.VolumeMountStatus{{Name: "kube-api-access-x7k2p",
					MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true, RecursiveReadOnly: ptr(corev1.RecursiveReadOnlyDisabled)}},
			}},
		},
	}
	o := ToObject(pod)
	if shape.ManagedFields {
		Meta(o)["managedFields"] = podManagedFields(ip, ports)
	}
	return o
}

// podManagedFields are the entries kube-controller-manager and the kubelet
// record on a pod of ports with ip.
func podManagedFields(ip string, ports []int32) []any {
	fm := func(keys ...string) map[string]any {
		m := map[string]any{}
		for _, k := range keys {
			m[k] = map[string]any{}
		}
		return m
	}
	portFields := fm(".")
	for _, p := range ports {
		portFields[fmt.Sprintf(`k:{"containerPort":%d,"protocol":"TCP"}`, p)] = fm(".", "f:containerPort", "f:name", "f:protocol")
	}
	container := fm(".", "f:image", "f:imagePullPolicy", "f:name", "f:resources", "f:terminationMessagePath", "f:terminationMessagePolicy")
	container["f:ports"] = portFields
	container["f:readinessProbe"] = map[string]any{".": map[string]any{}, "f:failureThreshold": map[string]any{}, "f:periodSeconds": map[string]any{},
		"f:successThreshold": map[string]any{}, "f:tcpSocket": fm(".", "f:port"), "f:timeoutSeconds": map[string]any{}}
	container["f:securityContext"] = map[string]any{".": map[string]any{}, "f:allowPrivilegeEscalation": map[string]any{}, "f:capabilities": fm(".", "f:drop")}
	spec := fm("f:dnsPolicy", "f:enableServiceLinks", "f:restartPolicy", "f:schedulerName", "f:terminationGracePeriodSeconds")
	spec["f:containers"] = map[string]any{`k:{"name":"app"}`: container}
	spec["f:securityContext"] = map[string]any{".": map[string]any{}, "f:runAsNonRoot": map[string]any{}, "f:seccompProfile": fm(".", "f:type")}
	conds := map[string]any{}
	for _, t := range []string{"ContainersReady", "Initialized", "PodReadyToStartContainers", "PodScheduled", "Ready"} {
		conds[fmt.Sprintf(`k:{"type":"%s"}`, t)] = fm(".", "f:lastProbeTime", "f:lastTransitionTime", "f:status", "f:type")
	}
	status := fm("f:containerStatuses", "f:hostIP", "f:hostIPs", "f:phase", "f:podIP", "f:startTime")
	status["f:conditions"] = conds
	status["f:podIPs"] = map[string]any{".": map[string]any{}, fmt.Sprintf(`k:{"ip":"%s"}`, ip): fm(".", "f:ip")}
	return []any{
		map[string]any{"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "kube-controller-manager", "operation": "Update",
			"time": ChildCreated, "fieldsV1": map[string]any{
				"f:metadata": map[string]any{"f:annotations": fm(".", "f:stackdome.io/revision"), "f:generateName": map[string]any{},
					"f:labels":          fm(".", "f:app.kubernetes.io/instance", "f:app.kubernetes.io/managed-by", "f:app.kubernetes.io/name", "f:pod-template-hash"),
					"f:ownerReferences": map[string]any{".": map[string]any{}, fmt.Sprintf(`k:{"uid":"%s"}`, UID(0x0fff0)): map[string]any{}}},
				"f:spec": spec}},
		map[string]any{"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": "kubelet", "operation": "Update", "subresource": "status",
			"time": ChildCreated, "fieldsV1": map[string]any{"f:status": status}},
	}
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(fmt.Sprintf("mcrequest: %q: %v", s, err))
	}
	return t
}

// AppSync is the sync request of parent with n running pods of shape
// (RunningPod, revision rev, IPs 10.<i>.<i>.<i> in pod order), related by
// rules (the customize hook's answer for parent), and no observed child:
// the request of a large app as Metacontroller sends it, pods and all.
func AppSync(parent Object, rules []metacontroller.RelatedResourceRule, rev string, n int, shape PodShape) *Sync {
	s := &Sync{Parent: parent, Rules: rules}
	for i := range n {
		ip := fmt.Sprintf("10.%d.%d.%d", 1+i>>16, (i>>8)&0xff, i&0xff)
		s.Cluster = append(s.Cluster, RunningPod(Name(parent), Namespace(parent), rev, i, ip, shape))
	}
	return s
}
