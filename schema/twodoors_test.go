package schema

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// A refusal is what a door says about one field: the error's type and path.
type refusal struct {
	Type field.ErrorType
	Path string
}

func (r refusal) String() string { return string(r.Type) + " " + r.Path }

func invalidAt(p string) refusal   { return refusal{field.ErrorTypeInvalid, p} }
func requiredAt(p string) refusal  { return refusal{field.ErrorTypeRequired, p} }
func forbiddenAt(p string) refusal { return refusal{field.ErrorTypeForbidden, p} }
func dupAt(p string) refusal       { return refusal{field.ErrorTypeDuplicate, p} }

// refusals are errs as the distinct (type, path) pairs they name, sorted:
// the two doors word their messages differently, and one door may say a
// thing twice (a pattern and a length on one value).
func refusals(errs field.ErrorList) []refusal {
	var out []refusal
	for _, e := range errs {
		r := refusal{e.Type, e.Field}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b refusal) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// goDoor is what stackdome's hook says of a StackResource, on the path it
// takes (hooks/sync.go validSpec): the name, the defaulted spec, the
// children's names.
func goDoor(name string, s Spec) field.ErrorList {
	var errs field.ErrorList
	for _, err := range []error{ValidateName(name), Validate(Default(s)), ValidateChildNames(name, s)} {
		var inv *InvalidError
		if errors.As(err, &inv) {
			errs = append(errs, inv.Errors...)
		} else if err != nil {
			errs = append(errs, field.InternalError(nil, err))
		}
	}
	return errs
}

// twoDoorCase is one invalid spec of the table. Both doors must refuse it
// with want alone. Where the CRD can only name the list a rule is stated on
// (CEL has no way to point at the offending item: uniqueness, a rule
// across fields of the list's items), crd is what it says, and why says so.
// only marks a rule one door alone can state.
type twoDoorCase struct {
	name string // metadata.name; "shop" when empty
	spec Spec
	old  *Spec // an update from old (a transition rule): the CRD alone sees it
	want refusal
	crd  *refusal
	only string // "go" or "crd"
	why  string
}

const (
	goOnly  = "go"
	crdOnly = "crd"
)

// with is publicSpec changed by f: a valid Service with one public port.
func with(f func(s *Spec)) Spec {
	s := publicSpec()
	f(&s)
	return s
}

// rootRule is the CRD's refusal by a rule of the object's root, which
// the API server reports at no path.
var rootRule = refusal{field.ErrorTypeInvalid, "<nil>"}

// listRule is the CRD's refusal of a rule stated on the list at p.
func listRule(typ field.ErrorType, p string) *refusal { return &refusal{typ, p} }

func cpu(q string) *corev1.ResourceRequirements {
	return &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}}
}

// twoDoorCases is the one table of invalid specs: each through Validate and
// through the CRD the API server serves, refused at the same field path.
func twoDoorCases() map[string]twoDoorCase {
	size := resource.MustParse("1Gi")
	cm := &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}
	stateful := func(f func(s *Spec)) Spec {
		return with(func(s *Spec) {
			s.Type = TypeStatefulService
			s.Storage = &Storage{Size: size, MountPath: "/data"}
			f(s)
		})
	}
	job := func(f func(s *Spec)) Spec {
		s := Spec{Type: TypeJob, Image: "migrate"}
		f(&s)
		return s
	}
	cases := map[string]twoDoorCase{
		// Type and image.
		"type not one of the four": {spec: with(func(s *Spec) { s.Type = "Lambda" }), want: refusal{field.ErrorTypeNotSupported, "spec.type"}},
		"type empty":               {spec: with(func(s *Spec) { s.Type = "" }), want: refusal{field.ErrorTypeNotSupported, "spec.type"}},
		"image empty":              {spec: with(func(s *Spec) { s.Image = "" }), want: invalidAt("spec.image")},
		"image blank": {spec: with(func(s *Spec) { s.Image = "  " }), want: invalidAt("spec.image"),
			why: "drift: the CRD took an image of spaces, which Validate refused"},

		// Ports: range, names, each once.
		"port 0":         {spec: with(func(s *Spec) { s.Ports[0].Port = 0 }), want: invalidAt("spec.ports[0].port")},
		"port 65536":     {spec: with(func(s *Spec) { s.Ports[0].Port = MaxPortNumber + 1 }), want: invalidAt("spec.ports[0].port")},
		"port name caps": {spec: with(func(s *Spec) { s.Ports[0].Name = "HTTP" }), want: invalidAt("spec.ports[0].name")},
		"port name digits": {spec: with(func(s *Spec) { s.Ports[0].Name = "8080" }), want: invalidAt("spec.ports[0].name"),
			why: "drift: the CRD's pattern took a name without a letter, which a containerPort refuses (an IANA service name)"},
		"port name two dashes": {spec: with(func(s *Spec) { s.Ports[0].Name = "a--b" }), want: invalidAt("spec.ports[0].name"),
			why: "drift, as above"},
		"port name twice": {spec: with(func(s *Spec) { s.Ports = append(s.Ports, Port{Name: "http", Port: 9090}) }),
			want: dupAt("spec.ports[1].name"), crd: listRule(field.ErrorTypeInvalid, "spec.ports"), why: "uniqueness: CEL names the list"},
		"port number twice": {spec: with(func(s *Spec) { s.Ports = append(s.Ports, Port{Name: "admin", Port: 8080}) }),
			want: dupAt("spec.ports[1].port"), crd: listRule(field.ErrorTypeInvalid, "spec.ports"), why: "uniqueness: CEL names the list"},
		"port path pattern": {spec: with(func(s *Spec) { s.Ports[0].Path = "/a b" }), want: invalidAt("spec.ports[0].path")},
		"port path plus": {spec: with(func(s *Spec) { s.Ports[0].Path = "/a+b" }), want: invalidAt("spec.ports[0].path"),
			why: "drift: Validate took what the CRD's pattern refuses"},
		"port container unknown": {spec: with(func(s *Spec) { s.Ports[0].Container = "proxy" }),
			want: invalidAt("spec.ports[0].container"), crd: listRule(field.ErrorTypeInvalid, "spec.ports"), why: "a rule across ports and sidecars: CEL names the list"},

		// Hosts.
		"public port without host":  {spec: with(func(s *Spec) { s.Host = "" }), want: requiredAt("spec.host")},
		"host not a DNS name":       {spec: with(func(s *Spec) { s.Host = "Shop_Example" }), want: invalidAt("spec.host")},
		"hosts item not a DNS name": {spec: with(func(s *Spec) { s.Hosts = []string{"B"} }), want: invalidAt("spec.hosts[0]")},
		"hosts repeat host": {spec: with(func(s *Spec) { s.Hosts = []string{"shop.example.com"} }),
			want: invalidAt("spec.hosts[0]"), crd: listRule(field.ErrorTypeInvalid, "spec.hosts"), why: "a rule across host and hosts: CEL names the list"},
		"hosts twice": {spec: with(func(s *Spec) { s.Hosts = []string{"a.example.com", "a.example.com"} }),
			want: dupAt("spec.hosts[1]"), crd: listRule(field.ErrorTypeInvalid, "spec.hosts"), why: "uniqueness: CEL names the list"},

		// Replicas and autoscaling.
		"replicas negative": {spec: with(func(s *Spec) { s.Replicas = i32(-1) }), want: invalidAt("spec.replicas")},
		"replicas with autoscaling": {spec: with(func(s *Spec) {
			s.Replicas, s.Autoscaling, s.Resources = i32(2), &Autoscaling{MaxReplicas: 3}, cpu("100m")
		}), want: forbiddenAt("spec.replicas")},
		"autoscaling without cpu": {spec: with(func(s *Spec) { s.Autoscaling = &Autoscaling{MaxReplicas: 3} }),
			want: requiredAt("spec.resources.requests[cpu]")},
		"autoscaling with cpu 0": {spec: with(func(s *Spec) { s.Autoscaling, s.Resources = &Autoscaling{MaxReplicas: 3}, cpu("0") }),
			want: requiredAt("spec.resources.requests[cpu]"), why: "drift: the CRD took a cpu request of 0, which the HorizontalPodAutoscaler divides by"},
		"autoscaling min above max": {spec: with(func(s *Spec) {
			s.Autoscaling, s.Resources = &Autoscaling{MinReplicas: i32(4), MaxReplicas: 3}, cpu("100m")
		}), want: invalidAt("spec.autoscaling.maxReplicas")},

		// Storage.
		"storage on a Service": {spec: with(func(s *Spec) { s.Storage = &Storage{Size: size, MountPath: "/data"} }), want: forbiddenAt("spec.storage")},
		"storage size 0": {spec: stateful(func(s *Spec) { s.Storage.Size = resource.MustParse("0") }), want: invalidAt("spec.storage.size"),
			why: "drift: the CRD took a volume of no size"},
		"storage relative mount": {spec: stateful(func(s *Spec) { s.Storage.MountPath = "data" }), want: invalidAt("spec.storage.mountPath")},
		"storage at a file's mount": {spec: stateful(func(s *Spec) { s.Files = []File{{Name: "cfg", MountPath: "/data", ConfigMap: cm}} }),
			want: invalidAt("spec.storage.mountPath")},
		"storage at a scratch mount": {spec: stateful(func(s *Spec) { s.Scratch = []Scratch{{Name: "tmp", MountPath: "/data", SizeLimit: size}} }),
			want: invalidAt("spec.storage.mountPath")},
		"storage at /dev/shm": {spec: stateful(func(s *Spec) { s.Storage.MountPath, s.Shm = ShmMountPath, &Shm{SizeLimit: size} }),
			want: forbiddenAt("spec.storage.mountPath")},
		"storage added": {old: new(stateful(func(s *Spec) { s.Storage = nil })), spec: stateful(func(*Spec) {}),
			want: invalidAt("spec.storage"), only: crdOnly, why: "a transition rule: Validate sees no old object"},
		"type changed": {old: new(publicSpec()), spec: with(func(s *Spec) { s.Type = TypeStatefulService }),
			want: invalidAt("spec.type"), only: crdOnly, why: "a transition rule: Validate sees no old object"},

		// Drain and grace (DefaultDrainSeconds, DefaultTerminationGracePeriodSeconds).
		"drain not below the default grace": {spec: with(func(s *Spec) { s.DrainSeconds = i32(int32(DefaultTerminationGracePeriodSeconds)) }),
			want: invalidAt("spec.drainSeconds")},
		"drain not below grace": {spec: with(func(s *Spec) { s.DrainSeconds, s.TerminationGracePeriodSeconds = i32(10), i64(10) }),
			want: invalidAt("spec.drainSeconds")},
		"grace not above the default drain": {spec: with(func(s *Spec) { s.TerminationGracePeriodSeconds = i64(int64(DefaultDrainSeconds)) }),
			want: invalidAt("spec.terminationGracePeriodSeconds")},
		"drain past its maximum": {spec: with(func(s *Spec) {
			s.DrainSeconds, s.TerminationGracePeriodSeconds = i32(MaxDrainSeconds+1), i64(MaxDrainSeconds+10)
		}),
			want: invalidAt("spec.drainSeconds")},

		// Routing: TLS, Middlewares, metrics, error pages.
		"tls without a public port": {spec: with(func(s *Spec) { s.Ports[0].Public, s.Host, s.TLS = false, "", &TLS{} }), want: forbiddenAt("spec.tls")},
		"tls secret and resolver":   {spec: with(func(s *Spec) { s.TLS = &TLS{SecretName: "s", CertResolver: "r"} }), want: forbiddenAt("spec.tls.certResolver")},
		"tls resolver quoted": {spec: with(func(s *Spec) { s.TLS = &TLS{CertResolver: `le"`} }), want: invalidAt("spec.tls.certResolver"),
			why: "drift: the CRD took a quote Validate refuses"},
		"middlewares without a public port": {spec: with(func(s *Spec) { s.Ports[0].Public, s.Host, s.Middlewares = false, "", []MiddlewareRef{{Name: "auth"}} }),
			want: forbiddenAt("spec.middlewares")},
		"middleware not a DNS name": {spec: with(func(s *Spec) { s.Middlewares = []MiddlewareRef{{Name: "Auth_1"}} }), want: invalidAt("spec.middlewares[0].name")},
		"middleware name empty":     {spec: with(func(s *Spec) { s.Middlewares = []MiddlewareRef{{Name: ""}} }), want: invalidAt("spec.middlewares[0].name")},
		"middleware twice": {spec: with(func(s *Spec) { s.Middlewares = []MiddlewareRef{{Name: "auth"}, {Name: "auth"}} }),
			want: dupAt("spec.middlewares[1].name"), crd: listRule(field.ErrorTypeInvalid, "spec.middlewares"), why: "uniqueness: CEL names the list"},
		"metrics port not declared": {spec: with(func(s *Spec) { s.Metrics = &Metrics{Port: "prom"} }), want: invalidAt("spec.metrics.port")},
		"metrics path pattern": {spec: with(func(s *Spec) { s.Metrics = &Metrics{Port: "http", Path: "/a b"} }), want: invalidAt("spec.metrics.path"),
			why: "drift: Validate did not check the path the CRD's pattern holds"},
		"brand not a DNS label": {spec: with(func(s *Spec) { s.ErrorPages = &ErrorPages{Brand: "<b>acme</b>"} }), want: invalidAt("spec.errorPages.brand")},
		"brand with pages off": {spec: with(func(s *Spec) { s.ErrorPages = &ErrorPages{Enabled: new(false), Brand: "acme"} }),
			want: forbiddenAt("spec.errorPages.brand")},

		// Files, scratch, shm, migration.
		"file without a source": {spec: with(func(s *Spec) { s.Files = []File{{Name: "cfg", MountPath: "/cfg"}} }), want: invalidAt("spec.files[0]")},
		"file's ConfigMap unnamed": {spec: with(func(s *Spec) {
			s.Files = []File{{Name: "cfg", MountPath: "/cfg", ConfigMap: &corev1.ConfigMapVolumeSource{}}}
		}),
			want: requiredAt("spec.files[0].configMap.name"), why: "drift: the CRD took a file of no ConfigMap, which the Pod refuses"},
		"file's Secret unnamed": {spec: with(func(s *Spec) {
			s.Files = []File{{Name: "cfg", MountPath: "/cfg", Secret: &corev1.SecretVolumeSource{}}}
		}),
			want: requiredAt("spec.files[0].secret.secretName"), why: "drift, as above"},
		"file name not a label": {spec: with(func(s *Spec) { s.Files = []File{{Name: "Cfg", MountPath: "/cfg", ConfigMap: cm}} }), want: invalidAt("spec.files[0].name")},
		"file at /":             {spec: with(func(s *Spec) { s.Files = []File{{Name: "cfg", MountPath: "/", ConfigMap: cm}} }), want: invalidAt("spec.files[0].mountPath")},
		"file names twice": {spec: with(func(s *Spec) {
			s.Files = []File{{Name: "cfg", MountPath: "/a", ConfigMap: cm}, {Name: "cfg", MountPath: "/b", ConfigMap: cm}}
		}), want: dupAt("spec.files[1].name"), crd: listRule(field.ErrorTypeInvalid, "spec.files"), why: "uniqueness: CEL names the list"},
		"file mounts twice": {spec: with(func(s *Spec) {
			s.Files = []File{{Name: "a", MountPath: "/cfg", ConfigMap: cm}, {Name: "b", MountPath: "/cfg", ConfigMap: cm}}
		}), want: dupAt("spec.files[1].mountPath"), crd: listRule(field.ErrorTypeInvalid, "spec.files"), why: "uniqueness: CEL names the list"},
		"file at /dev/shm with shm": {spec: with(func(s *Spec) {
			s.Files, s.Shm = []File{{Name: "cfg", MountPath: ShmMountPath, ConfigMap: cm}}, &Shm{SizeLimit: size}
		}), want: forbiddenAt("spec.files[0].mountPath"), crd: listRule(field.ErrorTypeForbidden, "spec.files"), why: "a rule across files and shm: CEL names the list"},
		"scratch at /dev/shm": {spec: with(func(s *Spec) { s.Scratch = []Scratch{{Name: "tmp", MountPath: ShmMountPath, SizeLimit: size}} }),
			want: forbiddenAt("spec.scratch[0].mountPath")},
		"scratch of no size": {spec: with(func(s *Spec) { s.Scratch = []Scratch{{Name: "tmp", MountPath: "/tmp"}} }), want: invalidAt("spec.scratch[0].sizeLimit")},
		"scratch at a file's mount": {spec: with(func(s *Spec) {
			s.Files, s.Scratch = []File{{Name: "cfg", MountPath: "/cfg", ConfigMap: cm}}, []Scratch{{Name: "tmp", MountPath: "/cfg", SizeLimit: size}}
		}), want: invalidAt("spec.scratch[0].mountPath"), crd: listRule(field.ErrorTypeInvalid, "spec.scratch"), why: "a rule across scratch and files: CEL names the list"},
		"scratch names twice": {spec: with(func(s *Spec) {
			s.Scratch = []Scratch{{Name: "tmp", MountPath: "/a", SizeLimit: size}, {Name: "tmp", MountPath: "/b", SizeLimit: size}}
		}), want: dupAt("spec.scratch[1].name"), crd: listRule(field.ErrorTypeInvalid, "spec.scratch"), why: "uniqueness: CEL names the list"},
		"shm of no size":            {spec: with(func(s *Spec) { s.Shm = &Shm{} }), want: invalidAt("spec.shm.sizeLimit")},
		"migration with no command": {spec: with(func(s *Spec) { s.Migration = &Migration{} }), want: requiredAt("spec.migration.command")},

		// Pod metadata.
		"pod label the workload selects by": {spec: with(func(s *Spec) { s.PodLabels = map[string]string{LabelPodTemplateHash: "x"} }),
			want: forbiddenAt("spec.podLabels[pod-template-hash]")},
		"pod annotation of a revision": {spec: with(func(s *Spec) { s.PodAnnotations = map[string]string{AnnotationRevision: "x"} }),
			want: forbiddenAt("spec.podAnnotations[stackdome.io/revision]")},
		"pod label key invalid": {spec: with(func(s *Spec) { s.PodLabels = map[string]string{"bad key": "v"} }), want: invalidAt("spec.podLabels"),
			only: goOnly, why: "the Pod's API checks label keys; the CRD's map takes any string"},
		"service account not a DNS name": {spec: with(func(s *Spec) { s.ServiceAccountName = "Web_1" }), want: invalidAt("spec.serviceAccountName")},
		"toleration Exists with a value": {spec: with(func(s *Spec) { s.Tolerations = []corev1.Toleration{{Operator: "Exists", Value: "v"}} }),
			want: invalidAt("spec.tolerations[0].value"), only: goOnly, why: "a rule of the Pod's API; the CRD holds corev1's schema, which states none"},
		"spread of no skew": {spec: with(func(s *Spec) {
			s.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{TopologyKey: "zone", WhenUnsatisfiable: corev1.DoNotSchedule}}
		}), want: invalidAt("spec.topologySpreadConstraints[0].maxSkew"), only: goOnly, why: "a rule of the Pod's API, as above"},
		"envFrom without a source": {spec: with(func(s *Spec) { s.EnvFrom = []EnvFromSource{{EnvFromSource: corev1.EnvFromSource{Prefix: "X_"}}} }),
			want: invalidAt("spec.envFrom[0]"), only: goOnly, why: "a rule of the Pod's API, as above"},
		"two public ports at one path": {spec: with(func(s *Spec) {
			s.Ports = append(s.Ports, Port{Name: "api", Port: 81, Public: true}, Port{Name: "ws", Port: 82, Public: true, Path: "/api"})
		}), want: invalidAt("spec.ports[2]"), only: goOnly, why: "the route paths are computed (RoutePath): CEL cannot"},

		// Run-to-completion types and sidecars.
		"job with ports":    {spec: job(func(s *Spec) { s.Ports = []Port{{Name: "http", Port: 80}} }), want: forbiddenAt("spec.ports")},
		"job with a host":   {spec: job(func(s *Spec) { s.Host = "a.example.com" }), want: forbiddenAt("spec.host")},
		"job with replicas": {spec: job(func(s *Spec) { s.Replicas = i32(2) }), want: forbiddenAt("spec.replicas")},
		"job with replicas 1": {spec: job(func(s *Spec) { s.Replicas = i32(DefaultReplicas) }), want: forbiddenAt("spec.replicas"),
			only: crdOnly, why: "Validate reads the defaulted spec, where Default has filled replicas 1 on every type: it refuses only a count that is not the default (the default on a Job is harmless: no pod count is built from it)"},
		"job with drain": {spec: job(func(s *Spec) { s.DrainSeconds = i32(1) }), want: forbiddenAt("spec.drainSeconds")},
		"job with a brand": {spec: job(func(s *Spec) { s.ErrorPages = &ErrorPages{Brand: "acme"} }), want: forbiddenAt("spec.errorPages"),
			why: "drift: Validate took a brand on a Job, which draws no pages"},
		"job settings on a Service": {spec: with(func(s *Spec) { s.Job = &JobSettings{} }), want: forbiddenAt("spec.job")},
		"cronJob on a Service":      {spec: with(func(s *Spec) { s.CronJob = &CronJobSettings{Schedule: "@daily"} }), want: forbiddenAt("spec.cronJob")},
		"CronJob without cronJob":   {spec: Spec{Type: TypeCronJob, Image: "report"}, want: requiredAt("spec.cronJob")},
		"schedule with TZ": {spec: cronSpec(CronJobSettings{Schedule: "CRON_TZ=UTC 0 3 * * *"}), want: invalidAt("spec.cronJob.schedule"),
			why: "drift: the CRD took TZ in a schedule without a timeZone, which the API server refuses in a new CronJob"},
		"schedule unparsable": {spec: cronSpec(CronJobSettings{Schedule: "0 26 * * *"}), want: invalidAt("spec.cronJob.schedule"),
			only: goOnly, why: "the CronJob controller's parser; CEL has the shape only"},
		"backoffLimit past its maximum": {spec: job(func(s *Spec) { s.Job = &JobSettings{BackoffLimit: i32(MaxBackoffLimit + 1)} }),
			want: invalidAt("spec.job.backoffLimit")},
		"concurrencyPolicy unknown": {spec: cronSpec(CronJobSettings{Schedule: "@daily", ConcurrencyPolicy: "Sometimes"}),
			want: refusal{field.ErrorTypeNotSupported, "spec.cronJob.concurrencyPolicy"}},
		"sidecar named app":   {spec: with(func(s *Spec) { s.Sidecars = []Sidecar{{Name: ContainerName, Image: "p"}} }), want: invalidAt("spec.sidecars[0].name")},
		"sidecar image blank": {spec: with(func(s *Spec) { s.Sidecars = []Sidecar{{Name: "proxy", Image: " "}} }), want: invalidAt("spec.sidecars[0].image")},
		"sidecars named twice": {spec: with(func(s *Spec) { s.Sidecars = []Sidecar{{Name: "proxy", Image: "p"}, {Name: "proxy", Image: "p"}} }),
			want: dupAt("spec.sidecars[1].name"), crd: listRule(field.ErrorTypeInvalid, "spec.sidecars"), why: "uniqueness: CEL names the list"},
		"sidecar file unknown": {spec: with(func(s *Spec) { s.Sidecars = []Sidecar{{Name: "proxy", Image: "p", Files: []string{"cfg"}}} }),
			want: invalidAt("spec.sidecars[0].files[0]"), crd: listRule(field.ErrorTypeInvalid, "spec.sidecars"), why: "a rule across sidecars and files: CEL names the list"},

		// Names.
		"name not a DNS label": {name: "my.app", spec: publicSpec(), want: invalidAt("metadata.name"), crd: &rootRule,
			why: "a rule on metadata.name is the root's: the CRD's metadata schema has no property a fieldPath could name"},
		"name too long": {name: strings.Repeat("a", MaxNameLength+1), spec: publicSpec(), want: rootRule,
			only: crdOnly, why: "at creation only (oldSelf): a resource admitted before the rule keeps working, and Validate cannot tell a creation"},
	}
	// The reserved suffixes, read from where stackdome names its children.
	for _, sfx := range middlewareSuffixes {
		cases["middleware named like stackdome's "+sfx] = twoDoorCase{spec: with(func(s *Spec) { s.Middlewares = []MiddlewareRef{{Name: "shop" + sfx}} }),
			want: forbiddenAt("spec.middlewares[0].name"), crd: listRule(field.ErrorTypeForbidden, "spec.middlewares"), why: "a rule across the name and the list: CEL names the list"}
	}
	for _, sfx := range reservedNameSuffixes {
		cases["name ending in "+sfx] = twoDoorCase{name: "shop" + sfx, spec: publicSpec(), want: rootRule,
			only: crdOnly, why: "at creation only, as the length"}
	}
	return cases
}

// TestTwoDoors runs the one table of invalid specs through Validate and
// through the CRD as the API server admits it, and requires each door to
// refuse it at the case's field path with the case's error type, and with
// nothing else: a rule stated once in each door, worded as each likes, but
// meaning the same.
func TestTwoDoors(t *testing.T) {
	crd := newCRDDoor(t)
	for name, tc := range twoDoorCases() {
		t.Run(name, func(t *testing.T) {
			obj := tc.name
			if obj == "" {
				obj = "shop"
			}
			if tc.only != crdOnly {
				if diff := cmp.Diff([]refusal{tc.want}, refusals(goDoor(obj, tc.spec))); diff != "" {
					t.Errorf("Validate (-want +got): %s\n%s\n%v", tc.why, diff, goDoor(obj, tc.spec))
				}
			}
			var errs field.ErrorList
			if tc.old != nil {
				errs = crd.update(t, obj, *tc.old, tc.spec)
			} else {
				errs = crd.create(t, obj, tc.spec)
			}
			want := []refusal{tc.want}
			switch {
			case tc.only == goOnly:
				want = nil
			case tc.crd != nil:
				want = []refusal{*tc.crd}
			}
			if diff := cmp.Diff(want, refusals(errs)); diff != "" {
				t.Errorf("the CRD (-want +got): %s\n%s\n%v", tc.why, diff, errs)
			}
		})
	}
}

// TestTwoDoorsAdmit: the valid specs the table's cases are made from, and
// the boundaries of the numbers both doors state, pass both.
func TestTwoDoorsAdmit(t *testing.T) {
	crd := newCRDDoor(t)
	size := resource.MustParse("1Gi")
	for name, s := range map[string]Spec{
		"minimal":                            base(),
		"public":                             publicSpec(),
		"drain just below the default grace": with(func(s *Spec) { s.DrainSeconds = i32(int32(DefaultTerminationGracePeriodSeconds) - 1) }),
		"grace just above the default drain": with(func(s *Spec) { s.TerminationGracePeriodSeconds = i64(int64(DefaultDrainSeconds) + 1) }),
		"no ports, grace 1": with(func(s *Spec) {
			s.Ports, s.Host, s.TerminationGracePeriodSeconds = nil, "", i64(MinTerminationGracePeriodSeconds)
		}),
		"drain at its maximum": with(func(s *Spec) {
			s.DrainSeconds, s.TerminationGracePeriodSeconds = i32(MaxDrainSeconds), i64(MaxTerminationGracePeriodSeconds)
		}),
		"port 65535": with(func(s *Spec) { s.Ports[0].Port = MaxPortNumber }),
		"stateful": with(func(s *Spec) {
			s.Type, s.Storage, s.Shm = TypeStatefulService, &Storage{Size: size, MountPath: "/data"}, &Shm{SizeLimit: size}
		}),
		"autoscaling": with(func(s *Spec) {
			s.Autoscaling, s.Resources = &Autoscaling{MinReplicas: i32(2), MaxReplicas: 3}, cpu("100m")
		}),
		"job":     {Type: TypeJob, Image: "migrate", Workloads: Workloads{Job: &JobSettings{BackoffLimit: i32(MaxBackoffLimit)}}},
		"cronjob": cronSpec(CronJobSettings{Schedule: "@daily", ConcurrencyPolicy: "Forbid"}),
		"sidecar port": with(func(s *Spec) {
			s.Sidecars, s.Ports = []Sidecar{{Name: "proxy", Image: "p"}}, append(s.Ports, Port{Name: "proxy", Port: 4180, Container: "proxy"})
		}),
	} {
		t.Run(name, func(t *testing.T) {
			require.Empty(t, goDoor("shop", s), "Validate")
			require.Empty(t, crd.create(t, "shop", s), "the CRD")
			require.Empty(t, crd.create(t, strings.Repeat("a", MaxNameLength), s), "the CRD, a name of MaxNameLength")
		})
	}
}
