package chart

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	kyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// repoRoot is the module root: go test runs in the package directory (chart/).
const repoRoot = ".."

// helmBin returns <repo>/bin/helm, built by `make tools`. Without it the chart
// cannot be checked at all: under CI that is a failure, locally a skip.
func helmBin(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join(repoRoot, "bin", "helm"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		missing(t, "%s not found (run `make tools`): %v", bin, err)
	}
	return bin
}

// missing fails under CI and skips elsewhere: for inputs a developer may not
// have yet but CI always must.
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// clusterKubeVersion is the Kubernetes the chart is rendered for, as Argo CD
// passes the cluster's: the e2e control plane's. Without --kube-version Helm
// renders for v1.20.0, below the chart's kubeVersion.
const clusterKubeVersion = "v1.37.2"

// clusterAPIs are the APIs of a cluster ready for stackdome, as Argo CD
// passes a cluster's to helm template (--api-versions): Metacontroller's
// CompositeController and Traefik's IngressRoute and Middleware. Without
// them the chart refuses to render (crdCheck).
var clusterAPIs = []string{
	"metacontroller.k8s.io/v1alpha1", "metacontroller.k8s.io/v1alpha1/CompositeController",
	"traefik.io/v1alpha1", "traefik.io/v1alpha1/IngressRoute", "traefik.io/v1alpha1/Middleware",
}

// install describes one `helm template` run.
type install struct {
	release     string   // default "stackdome"
	namespace   string   // default "stackdome"
	set         []string // --set key=value
	files       []string // -f testdata/<file>
	chartDir    string   // default "."
	kubeVersion string   // --kube-version; default clusterKubeVersion
	// apiVersions are passed as --api-versions; nil: clusterAPIs, an empty
	// slice: none, as plain helm template renders.
	apiVersions []string
	// noPodCIDRs leaves out kindPodCIDRs, which every other install passes
	// first (the chart has no default and refuses to render without one).
	noPodCIDRs bool
}

// kindPodCIDRs is the values file every install passes before its own
// (-f, so a test's files and --set win) unless noPodCIDRs: podCIDRs as
// docs/install.md gives it for kind.
const kindPodCIDRs = "kind-pod-cidrs.yaml"

// valueFiles is in.files, after kindPodCIDRs unless in.noPodCIDRs.
func (in install) valueFiles() []string {
	if in.noPodCIDRs {
		return in.files
	}
	return append([]string{kindPodCIDRs}, in.files...)
}

func (in install) args(cmd ...string) []string {
	release, ns, dir := in.release, in.namespace, in.chartDir
	if release == "" {
		release = "stackdome"
	}
	if ns == "" {
		ns = "stackdome"
	}
	if dir == "" {
		dir = "."
	}
	kubeVersion := in.kubeVersion
	if kubeVersion == "" {
		kubeVersion = clusterKubeVersion
	}
	args := append(cmd, release, dir, "--namespace", ns)
	apis := in.apiVersions
	if apis == nil {
		apis = clusterAPIs
	}
	if cmd[0] == "template" {
		args = append(args, "--kube-version", kubeVersion)
		for _, a := range apis {
			args = append(args, "--api-versions", a)
		}
	}
	for _, s := range in.set {
		args = append(args, "--set", s)
	}
	for _, f := range in.valueFiles() {
		args = append(args, "-f", filepath.Join("testdata", f))
	}
	return args
}

// renders memoizes runHelm by its arguments: the same values rendered for
// several tests run helm once (205 runs were 137 distinct). Only runs that
// read the package's own chart and testdata are kept, which no test writes;
// a run naming a temporary path (a chart copy with a probe template) is never
// reused.
var renders sync.Map // strings.Join(args, "\x00") → helmRun

type helmRun struct {
	out []byte
	err error
}

// runHelm runs helm with args, or returns the result of the same run made
// before (renders).
func runHelm(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	key := strings.Join(args, "\x00")
	reuse := !strings.Contains(key, os.TempDir())
	if r, ok := renders.Load(key); ok && reuse {
		r := r.(helmRun)
		return bytes.Clone(r.out), r.err
	}
	out, err := execHelm(t, args...)
	if reuse {
		renders.Store(key, helmRun{out: bytes.Clone(out), err: err})
	}
	return out, err
}

func execHelm(t *testing.T, args ...string) ([]byte, error) {
	t.Helper()
	cmd := exec.Command(helmBin(t), args...)
	// No cluster, no user config: the run depends on the chart and flags only.
	home := t.TempDir()
	cmd.Env = append(os.Environ(),
		"HELM_CACHE_HOME="+home, "HELM_CONFIG_HOME="+home, "HELM_DATA_HOME="+home,
		"KUBECONFIG="+filepath.Join(home, "no-kubeconfig"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("helm %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.Bytes(), nil
}

// render runs `helm template --include-crds` and fails the test on error.
func render(t *testing.T, in install) []byte {
	t.Helper()
	out, err := runHelm(t, in.args("template", "--include-crds")...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// object is one rendered manifest, decoded strictly into its Go type.
type object struct {
	apiVersion, kind, namespace, name string
	raw                               []byte // JSON
	typed                             any
}

func (o object) id() string {
	if o.namespace == "" {
		return o.kind + " " + o.name
	}
	return o.kind + " " + o.namespace + "/" + o.name
}

var coreScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, appsv1.AddToScheme, policyv1.AddToScheme, networkingv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}()

// strictCore is the API server's own strict decoder: unknown or duplicate
// fields and wrong case are errors, as with kubectl --validate=strict.
var strictCore = kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, coreScheme, coreScheme,
	kjson.SerializerOptions{Yaml: true, Strict: true})

// crdKinds are the kinds the k8s Go types do not cover; each decodes into a
// minimal struct of the fields the chart may set (unknown fields are errors).
var crdKinds = map[string]func() any{
	"CompositeController":      func() any { return new(compositeController) },
	"IngressRoute":             func() any { return new(ingressRoute) },
	"Middleware":               func() any { return new(middleware) },
	"ServiceMonitor":           func() any { return new(serviceMonitor) },
	"PrometheusRule":           func() any { return new(prometheusRule) },
	"CustomResourceDefinition": func() any { return new(customResourceDefinition) },
	"Certificate":              func() any { return new(certificate) },
	"Issuer":                   func() any { return new(issuer) },
}

// decode splits a rendered stream and decodes every document strictly.
func decode(t *testing.T, manifest []byte) []object {
	t.Helper()
	r := kyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifest)))
	var objs []object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("splitting manifests: %v", err)
		}
		js, err := kyaml.ToJSON(doc)
		if err != nil {
			t.Fatalf("converting manifest to JSON: %v\n%s", err, doc)
		}
		if bytes.Equal(bytes.TrimSpace(js), []byte("null")) {
			continue // a document of comments only
		}
		var head struct {
			APIVersion string            `json:"apiVersion"`
			Kind       string            `json:"kind"`
			Metadata   metav1.ObjectMeta `json:"metadata"`
		}
		if err := json.Unmarshal(js, &head); err != nil {
			t.Fatalf("reading type of manifest: %v\n%s", err, doc)
		}
		o := object{apiVersion: head.APIVersion, kind: head.Kind, namespace: head.Metadata.Namespace, name: head.Metadata.Name, raw: js}
		if newT, ok := crdKinds[head.Kind]; ok {
			o.typed = newT()
			dec := json.NewDecoder(bytes.NewReader(js))
			if head.Kind != "CustomResourceDefinition" { // a CRD may carry anything
				dec.DisallowUnknownFields()
			}
			if err := dec.Decode(o.typed); err != nil {
				t.Errorf("%s: strict decode: %v", o.id(), err)
			}
		} else {
			typed, _, err := strictCore.Decode(doc, nil, nil)
			if err != nil {
				t.Errorf("%s: strict decode: %v", o.id(), err)
			}
			o.typed = typed
		}
		objs = append(objs, o)
	}
	return objs
}

// find returns the single object of kind, failing when there is not exactly one.
func find[T any](t *testing.T, objs []object, kind string) T {
	t.Helper()
	var found []T
	for _, o := range objs {
		if o.kind == kind && !isPages(o) {
			v, ok := o.typed.(T)
			if !ok {
				t.Fatalf("%s decoded as %T", o.id(), o.typed)
			}
			found = append(found, v)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want exactly one %s, got %d", kind, len(found))
	}
	return found[0]
}

// isPages: an object of the error-page Deployment (its Deployment,
// PodDisruptionBudget and NetworkPolicy share the error-page Service's
// name); find leaves them out, findPages finds them.
func isPages(o object) bool {
	return o.kind != "Service" && strings.HasSuffix(o.name, "-error-pages")
}

// findPages returns the one object of kind of the error-page Deployment.
func findPages[T any](t *testing.T, objs []object, kind string) T {
	t.Helper()
	var found []T
	for _, o := range objs {
		if o.kind == kind && isPages(o) {
			found = append(found, o.typed.(T))
		}
	}
	if len(found) != 1 {
		t.Fatalf("want exactly one error-page %s, got %d", kind, len(found))
	}
	return found[0]
}

// findNamed returns the object of kind and name.
func findNamed[T any](t *testing.T, objs []object, kind, name string) T {
	t.Helper()
	for _, o := range objs {
		if o.kind == kind && o.name == name {
			v, ok := o.typed.(T)
			if !ok {
				t.Fatalf("%s decoded as %T", o.id(), o.typed)
			}
			return v
		}
	}
	t.Fatalf("no %s %q rendered", kind, name)
	var zero T
	return zero
}
