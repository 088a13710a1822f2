package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/stackdome/stackdome/schema"
)

// dataVolume is the volume of spec.storage.
const (
	dataVolume = "data"
)

// ChildResource is a kind Sync may return, as a CompositeController's
// childResources lists it.
type ChildResource struct {
	APIVersion, Resource, Kind string
}

// ChildResources are every kind Sync can return. Metacontroller only
// watches, updates and deletes the kinds its CompositeController lists, so the
// chart registers exactly these (a chart test checks it).
var ChildResources = []ChildResource{
	{APIVersion: "v1", Resource: "services", Kind: "Service"},
	{APIVersion: "apps/v1", Resource: "deployments", Kind: "Deployment"},
	{APIVersion: "apps/v1", Resource: "statefulsets", Kind: "StatefulSet"},
	{APIVersion: "traefik.io/v1alpha1", Resource: "middlewares", Kind: "Middleware"},
	{APIVersion: "traefik.io/v1alpha1", Resource: "ingressroutes", Kind: "IngressRoute"},
	{APIVersion: "autoscaling/v2", Resource: "horizontalpodautoscalers", Kind: "HorizontalPodAutoscaler"},
	{APIVersion: "discovery.k8s.io/v1", Resource: "endpointslices", Kind: "EndpointSlice"},
}

// selector is the label set that picks the app's pods: the workload's
// selector and the customize hook's rule.
func selector(name string) map[string]string {
	return map[string]string{schema.LabelInstance: name, schema.LabelManagedBy: schema.ManagedBy}
}

// labels go on every child and on the pod template.
func labels(name string) map[string]string {
	return map[string]string{schema.LabelName: name, schema.LabelInstance: name, schema.LabelManagedBy: schema.ManagedBy}
}

// headlessName is the StatefulSet's governing Service.
func headlessName(name string) string { return name + "-headless" }

// middlewareName is the errors Middleware of a resource.
func middlewareName(name string) string { return name + "-errors" }

// desired is the set of children of one valid spec, and the revision of its
// pod template.
type desired struct {
	revision string
	children []any
}

// buildChildren computes the children of a valid, defaulted spec that depend
// on the spec alone — the Services, the workload, the autoscaler — with the
// StatefulSet's claim templates as cl decides (the zero claims: the spec's).
// The routing children, which also depend on what the request observed,
// follow them (wiringChildren).
func buildChildren(cfg Config, name string, spec schema.Spec, cl claims) (desired, error) {
	mount := spec.Storage != nil
	if cl.kept != nil {
		mount = cl.mount
	}
	tmpl := podTemplate(cfg, name, spec, mount)
	rev, err := revision(tmpl)
	if err != nil {
		return desired{}, err
	}
	tmpl.Annotations = withRevision(tmpl.Annotations, rev)

	var typed []any
	if len(spec.Ports) > 0 {
		typed = append(typed, service(name, name, spec, false))
	}
	if spec.Type == schema.TypeStatefulService {
		typed = append(typed, service(headlessName(name), name, spec, true), statefulSet(name, spec, tmpl))
	} else {
		typed = append(typed, deployment(name, spec, tmpl))
	}
	if spec.Autoscaling != nil {
		typed = append(typed, autoscaler(name, spec))
	}
	out := desired{revision: rev}
	for _, t := range typed {
		m, err := canonical(t)
		if err != nil {
			return desired{}, err
		}
		if _, ok := t.(*appsv1.StatefulSet); ok && cl.kept != nil {
			keepClaims(m, cl.kept)
		}
		out.children = append(out.children, m)
	}
	return out, nil
}

// revision is a short stable hash of the canonical pod template.
func revision(tmpl corev1.PodTemplateSpec) (string, error) {
	m, err := canonical(tmpl)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(m) // map keys are sorted: the bytes are stable
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:5]), nil
}

func objectMeta(name, instance string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Labels: labels(instance)}
}

func deployment(name string, spec schema.Spec, tmpl corev1.PodTemplateSpec) *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: objectMeta(name, name),
		Spec: appsv1.DeploymentSpec{
			Replicas: spec.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: selector(name)},
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
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: objectMeta(name, name),
		Spec: appsv1.StatefulSetSpec{
			Replicas:    spec.Replicas,
			ServiceName: headlessName(name),
			Selector:    &metav1.LabelSelector{MatchLabels: selector(name)},
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

func service(name, instance string, spec schema.Spec, headless bool) *corev1.Service {
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: objectMeta(name, instance),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: selector(instance),
		},
	}
	if headless {
		// The governing Service of a StatefulSet: peers find each other
		// before they are ready.
		svc.Spec.ClusterIP = corev1.ClusterIPNone
		svc.Spec.PublishNotReadyAddresses = true
	}
	for _, p := range spec.Ports {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{
			Name: p.Name, Port: p.Port, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromString(p.Name),
		})
	}
	return svc
}

func childMeta(name, instance string) object {
	l := object{}
	for k, v := range labels(instance) {
		l[k] = v
	}
	return object{"name": name, "labels": l}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
