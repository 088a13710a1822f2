package schema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// crdLimit is one size or range limit the generated CRD states for a field
// under spec: path is the CRD's path ("spec.ports", "spec.ports[*].name"),
// kind the OpenAPI keyword, n its value.
type crdLimit struct {
	path, kind string
	n          int
}

// limitKinds are the OpenAPI keywords TestValidateEnforcesEveryCRDLimit
// holds Validate to. (minLength and minItems are the required-field checks,
// tested in TestValidate.)
var limitKinds = []string{"maxItems", "maxLength", "maxProperties", "minimum", "maximum"}

// crdLimits walks schema/crd.yaml's OpenAPI schema of spec and returns every
// limit of limitKinds, in walk order.
func crdLimits(t *testing.T) []crdLimit {
	t.Helper()
	root := crdSchema(t)
	spec, ok := root["properties"].(map[string]any)["spec"].(map[string]any)
	require.True(t, ok, "crd.yaml has no spec schema")

	var out []crdLimit
	var walk func(node map[string]any, path string)
	walk = func(node map[string]any, path string) {
		for _, k := range limitKinds {
			if v, ok := node[k]; ok {
				out = append(out, crdLimit{path: path, kind: k, n: v.(int)})
			}
		}
		props, _ := node["properties"].(map[string]any)
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			// Embedded Kubernetes types (resources, probes, affinity …) are
			// the API server's to check on the child; their schema holds no
			// limit of ours.
			walk(props[k].(map[string]any), path+"."+k)
		}
		if items, ok := node["items"].(map[string]any); ok {
			walk(items, path+"[*]")
		}
	}
	walk(spec, "spec")
	return out
}

// A limitCase builds, for the value n of one CRD limit, a spec whose field
// at that limit has size (or value) n and which is otherwise valid, and
// names the concrete field path Validate must report when n is past it.
type limitCase func(n int) (Spec, string)

func base() Spec { return Spec{Type: TypeService, Image: "nginx"} }

// dnsName is a valid DNS subdomain of exactly n characters (n ≥ 1).
func dnsName(n int, seed string) string {
	var b strings.Builder
	b.WriteString(seed)
	for b.Len() < n {
		if (b.Len()+1)%64 == 0 {
			b.WriteString(".")
		} else {
			b.WriteString("a")
		}
	}
	s := b.String()[:n]
	if strings.HasSuffix(s, ".") { // never end on a dot
		s = s[:n-1] + "b"
	}
	return s
}

// mountPath is an absolute path of exactly n characters (n ≥ 2).
func mountPath(n int, seed string) string {
	return ("/" + seed + strings.Repeat("p", n))[:n]
}

func publicSpec() Spec {
	s := base()
	s.Host = "shop.example.com"
	s.Ports = []Port{{Name: "http", Port: 8080, Public: true}}
	return s
}

// cronSpec is a valid type CronJob with c.
func cronSpec(c CronJobSettings) Spec {
	return Spec{Type: TypeCronJob, Image: "report", Workloads: Workloads{CronJob: &c}}
}

func i32(v int32) *int32 { return &v }
func i64(v int64) *int64 { return &v }

// limitCases are keyed "path kind" as crdLimits names them: a limit the
// CRD states and this table lacks fails the test, so a new marker cannot
// land without Validate enforcing it.
var limitCases = map[string]limitCase{
	// A DNS label: validateBrand says so in its own words.
	"spec.errorPages.brand maxLength": func(n int) (Spec, string) {
		s := publicSpec()
		s.ErrorPages = &ErrorPages{Brand: strings.Repeat("b", n)}
		return s, "spec.errorPages.brand"
	},
	"spec.metrics.path maxLength": func(n int) (Spec, string) {
		s := base()
		s.Ports = []Port{{Name: "metrics", Port: 9090}}
		s.Metrics = &Metrics{Port: "metrics", Path: mountPath(n, "metrics")}
		return s, "spec.metrics.path"
	},
	"spec.metrics.port maxLength": func(n int) (Spec, string) {
		s := base()
		name := strings.Repeat("m", n)
		s.Ports = []Port{{Name: name[:min(n, 15)], Port: 9090}}
		s.Metrics = &Metrics{Port: name}
		return s, "spec.metrics.port"
	},
	"spec.autoscaling.maxReplicas minimum": func(n int) (Spec, string) {
		s := base()
		s.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
		s.Autoscaling = &Autoscaling{MaxReplicas: int32(n)}
		return s, "spec.autoscaling.maxReplicas"
	},
	"spec.autoscaling.minReplicas minimum": func(n int) (Spec, string) {
		s := base()
		s.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
		s.Autoscaling = &Autoscaling{MinReplicas: i32(int32(n)), MaxReplicas: 2}
		return s, "spec.autoscaling.minReplicas"
	},
	"spec.autoscaling.targetCPUUtilizationPercentage minimum": func(n int) (Spec, string) {
		s := base()
		s.Resources = &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}
		s.Autoscaling = &Autoscaling{MaxReplicas: 2, TargetCPUUtilizationPercentage: i32(int32(n))}
		return s, "spec.autoscaling.targetCPUUtilizationPercentage"
	},
	"spec.drainSeconds minimum": func(n int) (Spec, string) {
		s := base()
		s.DrainSeconds = i32(int32(n))
		return s, "spec.drainSeconds"
	},
	"spec.drainSeconds maximum": func(n int) (Spec, string) {
		s := base()
		s.DrainSeconds, s.TerminationGracePeriodSeconds = i32(int32(n)), i64(3600)
		return s, "spec.drainSeconds"
	},
	"spec.files maxItems": func(n int) (Spec, string) {
		s := base()
		for i := range n {
			s.Files = append(s.Files, File{Name: "f" + strconv.Itoa(i), MountPath: "/etc/f" + strconv.Itoa(i),
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}})
		}
		return s, "spec.files"
	},
	"spec.files[*].mountPath maxLength": func(n int) (Spec, string) {
		s := base()
		s.Files = []File{{Name: "f", MountPath: mountPath(n, "etc"),
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}}
		return s, "spec.files[0].mountPath"
	},
	"spec.files[*].name maxLength": func(n int) (Spec, string) {
		s := base()
		s.Files = []File{{Name: strings.Repeat("f", n), MountPath: "/etc/f",
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}}
		return s, "spec.files[0].name"
	},
	"spec.host maxLength": func(n int) (Spec, string) {
		s := base()
		s.Host = dnsName(n, "h")
		return s, "spec.host"
	},
	"spec.hosts maxItems": func(n int) (Spec, string) {
		s := base()
		for i := range n {
			s.Hosts = append(s.Hosts, "h"+strconv.Itoa(i)+".example.com")
		}
		return s, "spec.hosts"
	},
	"spec.hosts[*] maxLength": func(n int) (Spec, string) {
		s := base()
		s.Hosts = []string{dnsName(n, "h")}
		return s, "spec.hosts[0]"
	},
	"spec.image maxLength": func(n int) (Spec, string) {
		s := base()
		s.Image = strings.Repeat("i", n)
		return s, "spec.image"
	},
	"spec.middlewares maxItems": func(n int) (Spec, string) {
		s := publicSpec()
		for i := range n {
			s.Middlewares = append(s.Middlewares, MiddlewareRef{Name: "m" + strconv.Itoa(i)})
		}
		return s, "spec.middlewares"
	},
	"spec.middlewares[*].name maxLength": func(n int) (Spec, string) {
		s := publicSpec()
		s.Middlewares = []MiddlewareRef{{Name: dnsName(n, "m")}}
		return s, "spec.middlewares[0].name"
	},
	"spec.podAnnotations maxProperties": func(n int) (Spec, string) {
		s := base()
		s.PodAnnotations = map[string]string{}
		for i := range n {
			s.PodAnnotations["example.com/a"+strconv.Itoa(i)] = "v"
		}
		return s, "spec.podAnnotations"
	},
	"spec.podLabels maxProperties": func(n int) (Spec, string) {
		s := base()
		s.PodLabels = map[string]string{}
		for i := range n {
			s.PodLabels["example.com/l"+strconv.Itoa(i)] = "v"
		}
		return s, "spec.podLabels"
	},
	"spec.ports maxItems": func(n int) (Spec, string) {
		s := base()
		for i := range n {
			s.Ports = append(s.Ports, Port{Name: "p" + strconv.Itoa(i), Port: int32(8000 + i)})
		}
		return s, "spec.ports"
	},
	"spec.ports[*].name maxLength": func(n int) (Spec, string) {
		s := base()
		s.Ports = []Port{{Name: strings.Repeat("p", n), Port: 8080}}
		return s, "spec.ports[0].name"
	},
	"spec.ports[*].path maxLength": func(n int) (Spec, string) {
		s := publicSpec()
		s.Ports[0].Path = mountPath(n, "api")
		return s, "spec.ports[0].path"
	},
	"spec.ports[*].port minimum": func(n int) (Spec, string) {
		s := base()
		s.Ports = []Port{{Name: "p", Port: int32(n)}}
		return s, "spec.ports[0].port"
	},
	"spec.ports[*].port maximum": func(n int) (Spec, string) {
		s := base()
		s.Ports = []Port{{Name: "p", Port: int32(n)}}
		return s, "spec.ports[0].port"
	},
	"spec.replicas minimum": func(n int) (Spec, string) {
		s := base()
		s.Replicas = i32(int32(n))
		return s, "spec.replicas"
	},
	"spec.scratch maxItems": func(n int) (Spec, string) {
		s := base()
		for i := range n {
			s.Scratch = append(s.Scratch, Scratch{Name: "s" + strconv.Itoa(i), MountPath: "/tmp/s" + strconv.Itoa(i), SizeLimit: resource.MustParse("1Mi")})
		}
		return s, "spec.scratch"
	},
	"spec.scratch[*].mountPath maxLength": func(n int) (Spec, string) {
		s := base()
		s.Scratch = []Scratch{{Name: "s", MountPath: mountPath(n, "tmp"), SizeLimit: resource.MustParse("1Mi")}}
		return s, "spec.scratch[0].mountPath"
	},
	"spec.scratch[*].name maxLength": func(n int) (Spec, string) {
		s := base()
		s.Scratch = []Scratch{{Name: strings.Repeat("s", n), MountPath: "/tmp", SizeLimit: resource.MustParse("1Mi")}}
		return s, "spec.scratch[0].name"
	},
	"spec.serviceAccountName maxLength": func(n int) (Spec, string) {
		s := base()
		s.ServiceAccountName = dnsName(n, "sa")
		return s, "spec.serviceAccountName"
	},
	"spec.storage.mountPath maxLength": func(n int) (Spec, string) {
		s := base()
		s.Type = TypeStatefulService
		s.Storage = &Storage{Size: resource.MustParse("1Gi"), MountPath: mountPath(n, "data")}
		return s, "spec.storage.mountPath"
	},
	"spec.cronJob.failedJobsHistoryLimit minimum": func(n int) (Spec, string) {
		return cronSpec(CronJobSettings{Schedule: "@daily", FailedJobsHistoryLimit: i32(int32(n))}), "spec.cronJob.failedJobsHistoryLimit"
	},
	"spec.cronJob.failedJobsHistoryLimit maximum": func(n int) (Spec, string) {
		return cronSpec(CronJobSettings{Schedule: "@daily", FailedJobsHistoryLimit: i32(int32(n))}), "spec.cronJob.failedJobsHistoryLimit"
	},
	"spec.cronJob.successfulJobsHistoryLimit minimum": func(n int) (Spec, string) {
		return cronSpec(CronJobSettings{Schedule: "@daily", SuccessfulJobsHistoryLimit: i32(int32(n))}), "spec.cronJob.successfulJobsHistoryLimit"
	},
	"spec.cronJob.successfulJobsHistoryLimit maximum": func(n int) (Spec, string) {
		return cronSpec(CronJobSettings{Schedule: "@daily", SuccessfulJobsHistoryLimit: i32(int32(n))}), "spec.cronJob.successfulJobsHistoryLimit"
	},
	"spec.cronJob.startingDeadlineSeconds minimum": func(n int) (Spec, string) {
		return cronSpec(CronJobSettings{Schedule: "@daily", StartingDeadlineSeconds: i64(int64(n))}), "spec.cronJob.startingDeadlineSeconds"
	},
	"spec.cronJob.schedule maxLength": func(n int) (Spec, string) {
		// A parsable schedule of exactly n characters: a day of week
		// repeated ("1,1,…"), "01" for an even length.
		head := "0 3 * * 1"
		if n%2 == 0 {
			head = "0 3 * * 01"
		}
		return cronSpec(CronJobSettings{Schedule: head + strings.Repeat(",1", (n-len(head))/2)}), "spec.cronJob.schedule"
	},
	"spec.cronJob.timeZone maxLength": func(n int) (Spec, string) {
		tz := "America/Argentina/ComodRivadavia" // the longest IANA name, 32
		tz += strings.Repeat("x", n-len(tz))
		return cronSpec(CronJobSettings{Schedule: "@daily", TimeZone: &tz}), "spec.cronJob.timeZone"
	},
	"spec.job.activeDeadlineSeconds minimum": func(n int) (Spec, string) {
		s := cronSpec(CronJobSettings{Schedule: "@daily"})
		s.Job = &JobSettings{ActiveDeadlineSeconds: i64(int64(n))}
		return s, "spec.job.activeDeadlineSeconds"
	},
	"spec.job.backoffLimit minimum": func(n int) (Spec, string) {
		s := cronSpec(CronJobSettings{Schedule: "@daily"})
		s.Job = &JobSettings{BackoffLimit: i32(int32(n))}
		return s, "spec.job.backoffLimit"
	},
	"spec.job.backoffLimit maximum": func(n int) (Spec, string) {
		s := cronSpec(CronJobSettings{Schedule: "@daily"})
		s.Job = &JobSettings{BackoffLimit: i32(int32(n))}
		return s, "spec.job.backoffLimit"
	},
	"spec.ports[*].container maxLength": func(n int) (Spec, string) {
		s := base()
		name := strings.Repeat("c", n)
		s.Sidecars = []Sidecar{{Name: strings.Repeat("c", min(n, 63)), Image: "proxy"}}
		s.Ports = []Port{{Name: "proxy", Port: 4180, Container: name}}
		return s, "spec.ports[0].container"
	},
	"spec.sidecars maxItems": func(n int) (Spec, string) {
		s := base()
		for i := range n {
			s.Sidecars = append(s.Sidecars, Sidecar{Name: "s" + strconv.Itoa(i), Image: "x"})
		}
		return s, "spec.sidecars"
	},
	"spec.sidecars[*].files maxItems": func(n int) (Spec, string) {
		s := base()
		c := Sidecar{Name: "s", Image: "x"}
		for i := range n {
			f := "f" + strconv.Itoa(i)
			s.Files = append(s.Files, File{Name: f, MountPath: "/etc/" + f,
				ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}})
			c.Files = append(c.Files, f)
		}
		s.Files = s.Files[:min(n, 16)]
		s.Sidecars = []Sidecar{c}
		return s, "spec.sidecars[0].files"
	},
	"spec.sidecars[*].files[*] maxLength": func(n int) (Spec, string) {
		s := base()
		f := strings.Repeat("f", n)
		s.Files = []File{{Name: f[:min(n, 57)], MountPath: "/etc/f",
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}}
		s.Sidecars = []Sidecar{{Name: "s", Image: "x", Files: []string{f}}}
		return s, "spec.sidecars[0].files[0]"
	},
	"spec.sidecars[*].image maxLength": func(n int) (Spec, string) {
		s := base()
		s.Sidecars = []Sidecar{{Name: "s", Image: strings.Repeat("i", n)}}
		return s, "spec.sidecars[0].image"
	},
	"spec.sidecars[*].name maxLength": func(n int) (Spec, string) {
		s := base()
		s.Sidecars = []Sidecar{{Name: strings.Repeat("s", n), Image: "x"}}
		return s, "spec.sidecars[0].name"
	},
	"spec.terminationGracePeriodSeconds minimum": func(n int) (Spec, string) {
		s := base()
		s.TerminationGracePeriodSeconds = i64(int64(n))
		return s, "spec.terminationGracePeriodSeconds"
	},
	"spec.terminationGracePeriodSeconds maximum": func(n int) (Spec, string) {
		s := base()
		s.TerminationGracePeriodSeconds = i64(int64(n))
		return s, "spec.terminationGracePeriodSeconds"
	},
	"spec.tls.certResolver maxLength": func(n int) (Spec, string) {
		s := publicSpec()
		s.TLS = &TLS{CertResolver: strings.Repeat("r", n)}
		return s, "spec.tls.certResolver"
	},
	"spec.tls.secretName maxLength": func(n int) (Spec, string) {
		s := publicSpec()
		s.TLS = &TLS{SecretName: dnsName(n, "tls")}
		return s, "spec.tls.secretName"
	},
}

// TestValidateEnforcesEveryCRDLimit is the one source of the CRD's limits:
// for every maxItems, maxLength, maxProperties, minimum and maximum that
// schema/crd.yaml (generated from the kubebuilder markers) states under
// spec, a spec exactly at the limit is valid and one a step past it is
// refused by Validate at that field's path — and the CRD, as the API server
// admits it (crdDoor), admits and refuses the same two specs at the same
// path. A spec that slipped past admission (a forged request, an object
// admitted by an older CRD) is thus held to the same bounds as one the API
// server checked.
func TestValidateEnforcesEveryCRDLimit(t *testing.T) {
	limits := crdLimits(t)
	require.NotEmpty(t, limits)
	crd := newCRDDoor(t)
	seen := map[string]bool{}
	for _, l := range limits {
		key := l.path + " " + l.kind
		seen[key] = true
		t.Run(key, func(t *testing.T) {
			mk, ok := limitCases[key]
			if !ok {
				t.Fatalf("crd.yaml states %s=%d at %s and Validate has no case for it: add one to limitCases and enforce it in validateLimits", l.kind, l.n, l.path)
			}
			at, _ := mk(l.n)
			require.NoError(t, Validate(Default(at)), "a spec at %s=%d must be valid", l.kind, l.n)
			past := l.n + 1
			if l.kind == "minimum" {
				past = l.n - 1
			}
			require.Empty(t, crd.create(t, "shop", at), "the CRD admits a spec at %s=%d", l.kind, l.n)
			over, path := mk(past)
			err := Validate(Default(over))
			require.Error(t, err, "%s=%d at %s: a spec with %d must be refused", l.kind, l.n, l.path, past)
			require.Contains(t, err.Error(), path, "refused at the field's path")
			var paths []string
			for _, e := range crd.create(t, "shop", over) {
				paths = append(paths, e.Field)
			}
			require.Contains(t, paths, path, "the CRD refuses it at the same path")
		})
	}
	for key := range limitCases {
		require.True(t, seen[key], "limitCases has %q, which crd.yaml no longer states", key)
	}
}

// TestValidateRefusesForgedPorts is issue 25's forged request: 65,535 ports
// refused, in one short line naming the limit, not one error per port.
func TestValidateRefusesForgedPorts(t *testing.T) {
	s := base()
	for i := range 65535 {
		s.Ports = append(s.Ports, Port{Name: fmt.Sprintf("p%d", i), Port: int32(i + 1)})
	}
	err := Validate(Default(s))
	require.Error(t, err)
	require.Contains(t, err.Error(), "spec.ports: Too many: 65535: must have at most 64 items")
	require.Less(t, len(err.Error()), 4096, "the refusal is short: it becomes a status message")
}
