package children

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// Config is what the children depend on besides the spec: where the routes
// point and whether the pods get the restricted security defaults. Every
// field is set (hooks.Config fills the defaults).
type Config struct {
	// EntryPoints of every IngressRoute.
	EntryPoints []string
	// ErrorService is the chart's error-page Service each errors
	// Middleware points at.
	ErrorService observed.ErrorService
	// NoErrorService: no error-page Service is installed, so no errors
	// Middleware is made.
	NoErrorService bool
	// NoPodSecurityDefaults leaves the pods' security contexts as the spec
	// says.
	NoPodSecurityDefaults bool
	// DefaultCertResolver is the certificate resolver of a TLS spec that
	// names neither a Secret nor a resolver; empty: the entry point's
	// default certificate.
	DefaultCertResolver string
	// HTTPEntryPoint is the plain-HTTP entry point: redirected to HTTPS for
	// a TLS app, routed as it is for an app without tls.
	HTTPEntryPoint string
	// DefaultResources are the app container's (and the migration's)
	// requests and limits when the spec sets no resources; zero: none.
	DefaultResources corev1.ResourceRequirements
	// NetworkPolicy is where a per-app NetworkPolicy's peers live, and
	// whether apps get one by default.
	NetworkPolicy NetworkPolicyConfig
	// PodMonitors: the cluster serves monitoring.coreos.com/v1 PodMonitors
	// and the CompositeController lists them, so spec.metrics makes one.
	PodMonitors bool
}

// dataVolume is the volume of spec.storage.
const dataVolume = "data"

// Selector is the label set that picks the app's pods: the workload's
// selector and the customize hook's rule.
func Selector(name string) map[string]string {
	return map[string]string{schema.LabelInstance: name, schema.LabelManagedBy: schema.ManagedBy}
}

// labels go on every child and on the pod template.
func labels(name string) map[string]string {
	return map[string]string{schema.LabelName: name, schema.LabelInstance: name, schema.LabelManagedBy: schema.ManagedBy}
}

// Desired is the set of children of one valid spec, and the revision of its
// pod template.
type Desired struct {
	Revision string
	Children []any
}

// Build computes the children of a valid, defaulted spec that depend on the
// spec alone — the Services, the workload (a Deployment, StatefulSet, Job
// or CronJob), the autoscaler, the disruption budget — with the
// StatefulSet's claim templates as cl decides (the zero Claims: the spec's).
// The routing children, which also depend on what the request observed,
// follow them (Routing). Core kinds are built typed and made canonical.
// digest is the content digest of the ConfigMaps and Secrets the pods
// follow (observed.Config.Digest): when not empty, the pod template carries
// it as schema.AnnotationConfigDigest, so the revision, which hashes the
// template, and the workload roll when it changes.
func Build(cfg Config, name string, spec schema.Spec, cl Claims, digest string) (Desired, error) {
	mount := spec.Storage != nil
	if cl.Kept != nil {
		mount = cl.Mount
	}
	tmpl := podTemplate(cfg, name, spec, mount)
	if digest != "" && spec.Type != schema.TypeJob {
		// Not a Job's: a new content of its ConfigMaps would rerun a
		// one-off run; the spec alone decides when it runs again.
		tmpl.Annotations = withAnnotation(tmpl.Annotations, schema.AnnotationConfigDigest, digest)
	}
	rev, err := revision(tmpl)
	if spec.Type == schema.TypeJob {
		rev, err = jobRevision(spec, tmpl)
	}
	if err != nil {
		return Desired{}, err
	}
	tmpl.Annotations = withRevision(tmpl.Annotations, rev)

	var typed []any
	switch spec.Type {
	case schema.TypeJob:
		typed = append(typed, job(name, rev, spec, tmpl))
	case schema.TypeCronJob:
		typed = append(typed, cronJob(name, spec, tmpl))
	}
	if len(spec.Ports) > 0 {
		typed = append(typed, service(name, name, spec, false))
	}
	switch spec.Type {
	case schema.TypeStatefulService:
		typed = append(typed, service(schema.HeadlessName(name), name, spec, true), statefulSet(name, spec, tmpl))
	case schema.TypeService:
		typed = append(typed, deployment(name, spec, tmpl))
	}
	if spec.Autoscaling != nil {
		typed = append(typed, autoscaler(name, spec))
	}
	if pdb := disruptionBudget(name, spec); pdb != nil {
		typed = append(typed, pdb)
	}
	out := Desired{Revision: rev}
	for _, t := range typed {
		m, err := canonical(t)
		if err != nil {
			return Desired{}, err
		}
		if _, ok := t.(*appsv1.StatefulSet); ok && cl.Kept != nil {
			keepClaims(m, cl.Kept)
		}
		out.Children = append(out.Children, m)
	}
	if pm := podMonitor(cfg, name, spec); pm != nil {
		out.Children = append(out.Children, pm)
	}
	return out, nil
}

// revision is a short stable hash of a canonical object: the pod template
// (a Job: its whole JobSpec).
func revision(tmpl any) (string, error) {
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

// objectMeta is the metadata of a typed child: its name and the labels of
// the resource instance it belongs to.
func objectMeta(name, instance string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Labels: labels(instance)}
}
