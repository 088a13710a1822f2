package chart

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// renderCases are the values combinations every structural test renders.
var renderCases = map[string]install{
	"defaults":        {},
	"error pages off": {set: []string{"errorPages.enabled=false"}},
	"catch-all off":   {set: []string{"errorPages.catchAll.enabled=false"}},
	"entry-point middleware": {set: []string{
		"errorPages.entryPointMiddleware.enabled=true",
		"errorPages.entryPointMiddleware.reference=stackdome-stackdome-errors@kubernetescrd",
	}},
	"no policy, no pdb, no service account": {set: []string{
		"networkPolicy.enabled=false", "podDisruptionBudget.enabled=false", "serviceAccount.create=false",
	}},
	"service monitor": {set: []string{
		"serviceMonitor.enabled=true", "serviceMonitor.namespace=monitoring", "networkPolicy.monitoringNamespace=monitoring",
	}},
	"all flags": {files: []string{"all-flags.yaml"}},
	"Metacontroller and Prometheus in one namespace": {files: []string{"one-namespace.yaml"}},
	"other release": {release: "edge", namespace: "platform"},
	"monitoring":    {files: []string{"monitoring.yaml"}},
	"monitoring, other release, no StackResource alerts": {release: "edge", namespace: "platform", set: []string{
		"prometheusRule.enabled=true", "prometheusRule.stackResourceAlerts=false",
		"kubeStateMetrics.enabled=true", "grafanaDashboard.enabled=true",
	}},
}

func ids(objs []object) []string {
	var got []string
	for _, o := range objs {
		got = append(got, o.id())
	}
	slices.Sort(got)
	return got
}

func TestRenderedObjects(t *testing.T) {
	const crd = "CustomResourceDefinition stackresources.stackdome.io"
	base := []string{
		crd,
		"CompositeController stackdome-stackdome",
		"Deployment stackdome/stackdome",
		"NetworkPolicy stackdome/stackdome",
		"PodDisruptionBudget stackdome/stackdome",
		"Service stackdome/stackdome",
		"ServiceAccount stackdome/stackdome",
	}
	// The page server's own Deployment, PodDisruptionBudget and
	// NetworkPolicy come with the error-page Service.
	pageServer := []string{
		"Deployment stackdome/stackdome-error-pages",
		"NetworkPolicy stackdome/stackdome-error-pages",
		"PodDisruptionBudget stackdome/stackdome-error-pages",
		"Service stackdome/stackdome-error-pages",
	}
	errorPages := append([]string{
		"IngressRoute stackdome/stackdome-catch-all",
		"Middleware stackdome/stackdome-catch-all",
	}, pageServer...)
	with := func(lists ...[]string) []string {
		var all []string
		for _, l := range lists {
			all = append(all, l...)
		}
		slices.Sort(all)
		return all
	}
	want := map[string][]string{
		"defaults":               with(base, errorPages),
		"error pages off":        with(base),
		"catch-all off":          with(base, pageServer),
		"entry-point middleware": with(base, errorPages, []string{"Middleware stackdome/stackdome-errors"}),
		"no policy, no pdb, no service account": with([]string{
			crd, "CompositeController stackdome-stackdome", "Deployment stackdome/stackdome", "Service stackdome/stackdome",
			"IngressRoute stackdome/stackdome-catch-all", "Middleware stackdome/stackdome-catch-all",
			"Deployment stackdome/stackdome-error-pages", "Service stackdome/stackdome-error-pages",
		}),
		"service monitor": with(base, errorPages, []string{"ServiceMonitor monitoring/stackdome"}),
		"Metacontroller and Prometheus in one namespace": with(base, errorPages, []string{"ServiceMonitor stackdome/stackdome"}),
		"all flags": with(base, errorPages),
		"monitoring": with(base, errorPages, []string{
			"ConfigMap grafana/stackdome-dashboard",
			"ConfigMap kube-state-metrics/stackdome-kube-state-metrics",
			"PrometheusRule monitoring/stackdome",
			"ServiceMonitor monitoring/stackdome",
		}),
		"monitoring, other release, no StackResource alerts": with([]string{
			crd,
			"CompositeController platform-edge-stackdome",
			"ConfigMap platform/edge-stackdome-dashboard",
			"ConfigMap platform/edge-stackdome-kube-state-metrics",
			"Deployment platform/edge-stackdome",
			"IngressRoute platform/edge-stackdome-catch-all",
			"Middleware platform/edge-stackdome-catch-all",
			"NetworkPolicy platform/edge-stackdome",
			"PodDisruptionBudget platform/edge-stackdome",
			"PrometheusRule platform/edge-stackdome",
			"Service platform/edge-stackdome",
			"Service platform/edge-stackdome-error-pages",
			"Deployment platform/edge-stackdome-error-pages",
			"NetworkPolicy platform/edge-stackdome-error-pages",
			"PodDisruptionBudget platform/edge-stackdome-error-pages",
			"ServiceAccount platform/edge-stackdome",
		}),
		"other release": with([]string{
			crd,
			"CompositeController platform-edge-stackdome",
			"Deployment platform/edge-stackdome",
			"IngressRoute platform/edge-stackdome-catch-all",
			"Middleware platform/edge-stackdome-catch-all",
			"NetworkPolicy platform/edge-stackdome",
			"PodDisruptionBudget platform/edge-stackdome",
			"Service platform/edge-stackdome",
			"Service platform/edge-stackdome-error-pages",
			"Deployment platform/edge-stackdome-error-pages",
			"NetworkPolicy platform/edge-stackdome-error-pages",
			"PodDisruptionBudget platform/edge-stackdome-error-pages",
			"ServiceAccount platform/edge-stackdome",
		}),
	}
	for name, in := range renderCases {
		t.Run(name, func(t *testing.T) {
			objs := decode(t, render(t, in))
			if diff := cmp.Diff(want[name], ids(objs)); diff != "" {
				t.Errorf("rendered objects (-want +got):\n%s", diff)
			}
			for _, o := range objs {
				switch o.kind {
				case "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding", "Secret":
					t.Errorf("%s: stackdome needs no credentials", o.id())
				}
			}
		})
	}
}

func TestErrorPagesDisabledRendersNoErrorPageObject(t *testing.T) {
	out := render(t, renderCases["error pages off"])
	objs := decode(t, out)
	for _, o := range objs {
		if o.apiVersion == "traefik.io/v1alpha1" || strings.HasSuffix(o.name, "-error-pages") {
			t.Errorf("%s rendered with errorPages.enabled=false", o.id())
		}
	}
	if bytes.Contains(out, []byte("stackdome-error-pages")) {
		t.Error("the error-page Service is still referenced")
	}
	args := find[*appsv1.Deployment](t, objs, "Deployment").Spec.Template.Spec.Containers[0].Args
	if !slices.Contains(args, "--error-service-name=") || slices.ContainsFunc(args, func(a string) bool {
		return strings.HasPrefix(a, "--error-service-namespace") || strings.HasPrefix(a, "--error-service-port")
	}) {
		t.Errorf("stackdome must be told there is no error-page Service, got args %q", args)
	}
	for _, rule := range find[*networkingv1.NetworkPolicy](t, objs, "NetworkPolicy").Spec.Ingress {
		for _, p := range rule.Ports {
			if p.Port.String() == "errors" {
				t.Error("the NetworkPolicy still opens the error-page port")
			}
		}
	}
}

func TestEntryPointMiddlewareReferenceGuard(t *testing.T) {
	tests := map[string]struct {
		namespace, reference string
		errorPagesOff        bool
		wantErr              string
	}{
		"exact": {namespace: "stackdome", reference: "stackdome-stackdome-errors@kubernetescrd"},
		"exact, other namespace": {
			namespace: "edge", reference: "edge-stackdome-errors@kubernetescrd",
		},
		"empty": {
			namespace: "stackdome", reference: "",
			wantErr: `Traefik resolves only "stackdome-stackdome-errors@kubernetescrd"`,
		},
		"release namespace is a prefix of the referenced one": {
			namespace: "stack", reference: "stackdome-stackdome-errors@kubernetescrd",
			wantErr: `Traefik resolves only "stack-stackdome-errors@kubernetescrd"`,
		},
		"referenced namespace is a prefix of the release's": {
			namespace: "stackdome-prod", reference: "stackdome-stackdome-errors@kubernetescrd",
			wantErr: `Traefik resolves only "stackdome-prod-stackdome-errors@kubernetescrd"`,
		},
		"another namespace with the release's as prefix": {
			namespace: "stackdome", reference: "stackdome-prod-stackdome-errors@kubernetescrd",
			wantErr: `Traefik resolves only "stackdome-stackdome-errors@kubernetescrd"`,
		},
		"no provider": {
			namespace: "stackdome", reference: "stackdome-stackdome-errors",
			wantErr: `Traefik resolves only "stackdome-stackdome-errors@kubernetescrd"`,
		},
		"file provider": {
			namespace: "stackdome", reference: "stackdome-stackdome-errors@file",
			wantErr: `Traefik resolves only "stackdome-stackdome-errors@kubernetescrd"`,
		},
		"error pages off": {
			namespace: "stackdome", reference: "stackdome-stackdome-errors@kubernetescrd", errorPagesOff: true,
			wantErr: "needs errorPages.enabled=true",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := install{namespace: tc.namespace, set: []string{
				"errorPages.entryPointMiddleware.enabled=true",
				"errorPages.entryPointMiddleware.reference=" + tc.reference,
				"errorPages.enabled=" + strconv.FormatBool(!tc.errorPagesOff),
			}}
			out, err := runHelm(t, in.args("template")...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mw := findNamed[*middleware](t, decode(t, out), "Middleware", "stackdome-errors")
			if mw.Metadata.Namespace != tc.namespace {
				t.Errorf("Middleware in namespace %q, want %q", mw.Metadata.Namespace, tc.namespace)
			}
			if got := mw.Metadata.Namespace + "-" + mw.Metadata.Name + "@kubernetescrd"; got != tc.reference {
				t.Errorf("Traefik would resolve %q, values give %q", got, tc.reference)
			}
		})
	}
}

func TestLintStrict(t *testing.T) {
	for name, in := range renderCases {
		if in.release != "" {
			continue // lint takes no release name
		}
		t.Run(name, func(t *testing.T) {
			// helm lint takes no --api-versions: the prerequisite check's
			// fail is an [INFO] line in lint mode, and the rest is linted.
			args := []string{"lint", ".", "--strict", "--namespace", "stackdome"}
			for _, s := range in.set {
				args = append(args, "--set", s)
			}
			for _, f := range in.valueFiles() {
				args = append(args, "-f", filepath.Join("testdata", f))
			}
			out, err := runHelm(t, args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if bytes.Contains(out, []byte("[WARNING]")) || bytes.Contains(out, []byte("[ERROR]")) {
				t.Fatalf("lint is not clean:\n%s", out)
			}
		})
	}
}

func TestValuesSchemaRejects(t *testing.T) {
	tests := map[string]struct {
		set  string
		want string
	}{
		"typo at the top":           {set: "replicaCont=3", want: "additional properties 'replicaCont' not allowed"},
		"typo in config":            {set: "config.dialWorker=3", want: "additional properties 'dialWorker' not allowed"},
		"typo two levels down":      {set: "errorPages.catchAll.entrypoints={web}", want: "additional properties 'entrypoints' not allowed"},
		"wrong type":                {set: "config.dialWorkers=lots", want: "at '/config/dialWorkers': got string, want integer"},
		"negative replicas":         {set: "replicaCount=-1", want: "at '/replicaCount': minimum: got -1, want 1"},
		"zero replicas":             {set: "replicaCount=0", want: "at '/replicaCount': minimum: got 0, want 1"},
		"not a duration":            {set: "config.portCheckGrace=3 minutes", want: "at '/config/portCheckGrace'"},
		"unparsable shutdown":       {set: "config.shutdownTimeout=1500ms", want: "at '/config/shutdownTimeout'"},
		"unknown log format":        {set: "config.logFormat=xml", want: "value must be one of 'json', 'text'"},
		"not a CIDR":                {set: "podCIDRs={10.0.0.0}", want: "at '/podCIDRs/0'"},
		"port out of range":         {set: "ports.hooks=70000", want: "at '/ports/hooks': maximum"},
		"metrics port out of range": {set: "ports.metrics=0", want: "at '/ports/metrics': minimum"},
		"pod selector typo":         {set: "networkPolicy.metacontrollerPodSelector.matchLabel.app=mc", want: "additional properties 'matchLabel' not allowed"},
		"resync not positive":       {set: "compositeController.resyncPeriodSeconds=0", want: "at '/compositeController/resyncPeriodSeconds'"},
		"namespace not a name":      {set: "networkPolicy.metacontrollerNamespace=Meta_Controller", want: "at '/networkPolicy/metacontrollerNamespace'"},
		"typo in prometheusRule":    {set: "prometheusRule.stalledAfter=5m", want: "additional properties 'stalledAfter' not allowed"},
		"not a Prometheus duration": {set: "prometheusRule.stalledFor=10 minutes", want: "at '/prometheusRule/stalledFor'"},
		"Go-only duration unit":     {set: "prometheusRule.portNotListeningFor=5m0.5s", want: "at '/prometheusRule/portNotListeningFor'"},
		"typo in kubeStateMetrics":  {set: "kubeStateMetrics.enable=true", want: "additional properties 'enable' not allowed"},
		"typo in grafanaDashboard":  {set: "grafanaDashboard.folder=x", want: "additional properties 'folder' not allowed"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := runHelm(t, install{set: []string{tc.set}}.args("template")...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
		})
	}
}

// TestDeploymentIsHardened holds both Deployments, the hooks' and the error
// pages', to the same hardening, each with a PodDisruptionBudget of its own.
func TestDeploymentIsHardened(t *testing.T) {
	for name, in := range renderCases {
		t.Run(name, func(t *testing.T) {
			objs := decode(t, render(t, in))
			var deployments []*appsv1.Deployment
			for _, o := range objs {
				if d, ok := o.typed.(*appsv1.Deployment); ok {
					deployments = append(deployments, d)
				}
			}
			if len(deployments) == 0 {
				t.Fatal("no Deployment")
			}
			for _, d := range deployments {
				hardened(t, objs, d)
			}
		})
	}
}

func hardened(t *testing.T, objs []object, d *appsv1.Deployment) {
	t.Helper()
	{
		{
			pod := d.Spec.Template.Spec
			if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
				t.Errorf("replicas = %v, want 2", d.Spec.Replicas)
			}
			if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
				t.Error("the pod must not mount a service-account token")
			}
			wantPod := &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr(true),
				RunAsUser:      ptr(int64(65532)),
				RunAsGroup:     ptr(int64(65532)),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			}
			if diff := cmp.Diff(wantPod, pod.SecurityContext); diff != "" {
				t.Errorf("pod securityContext (-want +got):\n%s", diff)
			}
			if len(pod.Containers) != 1 {
				t.Fatalf("want one container, got %d", len(pod.Containers))
			}
			c := pod.Containers[0]
			wantContainer := &corev1.SecurityContext{
				AllowPrivilegeEscalation: ptr(false),
				Privileged:               ptr(false),
				ReadOnlyRootFilesystem:   ptr(true),
				RunAsNonRoot:             ptr(true),
				Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			}
			if diff := cmp.Diff(wantContainer, c.SecurityContext); diff != "" {
				t.Errorf("container securityContext (-want +got):\n%s", diff)
			}
			probes := map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe}
			for kind, path := range map[string]string{"readiness": "/readyz", "liveness": "/healthz"} {
				p := probes[kind]
				if p == nil || p.HTTPGet == nil || p.HTTPGet.Path != path || p.HTTPGet.Port != intstr.FromString("http") {
					t.Errorf("%s probe = %+v, want GET %s on the hooks port", kind, p, path)
				}
			}
			if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() || c.Resources.Limits.Memory().IsZero() {
				t.Errorf("resources = %+v, want cpu and memory requests and a memory limit", c.Resources)
			}
			if len(pod.TopologySpreadConstraints) == 0 && pod.Affinity == nil {
				t.Error("replicas are not spread")
			}
			for _, tsc := range pod.TopologySpreadConstraints {
				if !selects(t, tsc.LabelSelector, d.Spec.Template.Labels) {
					t.Errorf("topology spread on %s does not select the pods", tsc.TopologyKey)
				}
			}
			if ru := d.Spec.Strategy.RollingUpdate; ru == nil || ru.MaxUnavailable == nil || ru.MaxUnavailable.IntValue() != 0 {
				t.Error("a rollout may take a replica away before its replacement is ready")
			}
			stop := argSeconds(t, c.Args, "drain-delay") + argSeconds(t, c.Args, "shutdown-timeout")
			if pod.TerminationGracePeriodSeconds == nil || *pod.TerminationGracePeriodSeconds <= stop {
				t.Errorf("terminationGracePeriodSeconds %v must exceed --drain-delay + --shutdown-timeout (%ds)", pod.TerminationGracePeriodSeconds, stop)
			}
			if sa := findSA(objs); sa != nil {
				if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
					t.Error("the ServiceAccount must not automount a token")
				}
				if sa.Name != pod.ServiceAccountName {
					t.Errorf("pod uses ServiceAccount %q, chart renders %q", pod.ServiceAccountName, sa.Name)
				}
			}
			for _, o := range objs {
				if pdb, ok := o.typed.(*policyv1.PodDisruptionBudget); ok && o.name == d.Name {
					if pdb.Spec.MaxUnavailable == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 {
						t.Errorf("PodDisruptionBudget maxUnavailable = %v, want 1", pdb.Spec.MaxUnavailable)
					}
					if diff := cmp.Diff(d.Spec.Selector, pdb.Spec.Selector); diff != "" {
						t.Errorf("PodDisruptionBudget %s selects other pods (-deployment +pdb):\n%s", o.name, diff)
					}
				}
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

func findSA(objs []object) *corev1.ServiceAccount {
	for _, o := range objs {
		if sa, ok := o.typed.(*corev1.ServiceAccount); ok {
			return sa
		}
	}
	return nil
}

func selects(t *testing.T, sel *metav1.LabelSelector, set labels.Set) bool {
	t.Helper()
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		t.Fatal(err)
	}
	return !s.Empty() && s.Matches(set)
}

// argSeconds returns the duration flag's value in seconds.
func argSeconds(t *testing.T, args []string, flag string) int64 {
	t.Helper()
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+flag+"="); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatal(err)
			}
			return int64(d.Seconds())
		}
	}
	t.Fatalf("no --%s", flag)
	return 0
}

func TestEveryFlagReachesTheContainer(t *testing.T) {
	tests := map[string]struct {
		in                  install
		wantImage, wantPull string
		wantArgs            []string
		wantPorts           []int32
	}{
		"defaults": {
			in:        renderCases["defaults"],
			wantImage: "ghcr.io/stackdome/stackdome:" + chartAppVersion(t),
			wantPull:  "IfNotPresent",
			wantArgs: []string{
				"--listen=:8080",
				"--pages=false",
				"--metrics-listen=:8081",
				"--port-check-grace=3m",
				"--verdict-requeue=10s",
				"--boot-grace=5m",
				"--port-recheck=5m",
				"--dial-timeout=2s",
				"--dial-workers=32",
				"--dial-queue=1024",
				"--dial-allow=10.244.0.0/16",
				"--verdict-ttl=1h",
				"--log-format=json",
				"--log-level=info",
				"--drain-delay=5s",
				"--shutdown-timeout=25s",
				"--entry-points=websecure",
				"--http-entry-point=web",
				"--tls-cert-resolver=",
				"--pod-security-defaults=true",
				"--relate-secrets=true",
				"--relate-configmaps=true",
				"--network-policy-default=false",
				"--network-policy-stackdome-namespace=stackdome",
				"--network-policy-stackdome-pods=app.kubernetes.io/component=controller,app.kubernetes.io/instance=stackdome,app.kubernetes.io/name=stackdome",
				"--network-policy-traefik-namespace=traefik",
				"--pod-monitors=false",
				"--error-service-name=stackdome-error-pages",
				"--error-service-namespace=stackdome",
				"--error-service-port=8082",
			},
			wantPorts: []int32{8080, 8081},
		},
		"all flags": {
			in:        renderCases["all flags"],
			wantImage: "registry.example/stackdome:9.9.9",
			wantPull:  "Always",
			wantArgs: []string{
				"--listen=:9080",
				"--pages=false",
				"--metrics-listen=:9081",
				"--port-check-grace=4m",
				"--verdict-requeue=15s",
				"--boot-grace=7m",
				"--port-recheck=6m",
				"--dial-timeout=3s",
				"--dial-workers=64",
				"--dial-queue=2048",
				"--dial-allow=10.42.0.0/16,fd00:42::/56",
				"--verdict-ttl=2h",
				"--log-format=text",
				"--log-level=debug",
				"--drain-delay=8s",
				"--shutdown-timeout=1m30s",
				"--entry-points=web,websecure",
				"--http-entry-point=http",
				"--tls-cert-resolver=letsencrypt",
				"--pod-security-defaults=false",
				"--relate-secrets=false",
				"--relate-configmaps=false",
				"--default-requests=cpu=100m,memory=128Mi",
				"--default-limits=cpu=1,memory=256Mi",
				"--network-policy-default=true",
				"--network-policy-stackdome-namespace=stackdome",
				"--network-policy-stackdome-pods=app.kubernetes.io/component=controller,app.kubernetes.io/instance=stackdome,app.kubernetes.io/name=stackdome",
				"--network-policy-traefik-namespace=ingress",
				"--pod-monitors=true",
				"--network-policy-traefik-pods=app.kubernetes.io/name=traefik",
				"--error-service-name=stackdome-error-pages",
				"--error-service-namespace=stackdome",
				"--error-service-port=8090",
				"--max-body=2097152",
			},
			wantPorts: []int32{9080, 9081},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := find[*appsv1.Deployment](t, decode(t, render(t, tc.in)), "Deployment").Spec.Template.Spec.Containers[0]
			if diff := cmp.Diff(tc.wantArgs, c.Args); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if len(c.Command) != 0 {
				t.Errorf("command = %q: the image's entrypoint is the binary", c.Command)
			}
			if c.Image != tc.wantImage || string(c.ImagePullPolicy) != tc.wantPull {
				t.Errorf("image %s (%s), want %s (%s)", c.Image, c.ImagePullPolicy, tc.wantImage, tc.wantPull)
			}
			var ports []int32
			for _, p := range c.Ports {
				ports = append(ports, p.ContainerPort)
			}
			if diff := cmp.Diff(tc.wantPorts, ports); diff != "" {
				t.Errorf("container ports (-want +got):\n%s", diff)
			}
		})
	}
}

func chartAppVersion(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile("Chart.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "appVersion:"); ok {
			return strings.Trim(strings.TrimSpace(v), `"`)
		}
	}
	t.Fatal("Chart.yaml has no appVersion")
	return ""
}

// TestReferencesResolve follows every name, namespace and port one rendered
// object uses to reach another, so a renamed Service or port cannot leave a
// dangling reference for Metacontroller or Traefik, and no hook request
// reaches the pages' pods nor a page request the hooks'.
func TestReferencesResolve(t *testing.T) {
	for name, in := range renderCases {
		t.Run(name, func(t *testing.T) {
			objs := decode(t, render(t, in))
			d := find[*appsv1.Deployment](t, objs, "Deployment")
			c := d.Spec.Template.Spec.Containers[0]
			podLabels := labels.Set(d.Spec.Template.Labels)
			if !selects(t, d.Spec.Selector, podLabels) {
				t.Fatal("the Deployment's selector does not match its pods")
			}
			ns := d.Namespace
			arg := func(flag string) (string, bool) {
				for _, a := range c.Args {
					if v, ok := strings.CutPrefix(a, "--"+flag+"="); ok {
						return v, true
					}
				}
				return "", false
			}
			// Ports are named per container: pods says whose ("hooks" or
			// "pages"), so that a port of the other Deployment of the same
			// number never counts.
			containers := map[string]corev1.Container{"hooks": c}
			podsOf := map[string]labels.Set{"hooks": podLabels}
			for _, o := range objs {
				if pd, ok := o.typed.(*appsv1.Deployment); ok && isPages(o) {
					if !selects(t, pd.Spec.Selector, pd.Spec.Template.Labels) {
						t.Fatal("the error-page Deployment's selector does not match its pods")
					}
					if selects(t, pd.Spec.Selector, podLabels) || selects(t, d.Spec.Selector, pd.Spec.Template.Labels) {
						t.Fatal("the two Deployments' selectors take each other's pods")
					}
					containers["pages"] = pd.Spec.Template.Spec.Containers[0]
					podsOf["pages"] = pd.Spec.Template.Labels
				}
			}
			type port struct {
				pods string
				port int32
			}
			portOf := func(pods, name string) port {
				t.Helper()
				for _, p := range containers[pods].Ports {
					if p.Name == name {
						return port{pods, p.ContainerPort}
					}
				}
				t.Fatalf("no container port named %q on the %s pods", name, pods)
				return port{}
			}
			containerPort := func(name string) port { return portOf("hooks", name) }
			listen, _ := arg("listen")
			if listen != ":"+strconv.Itoa(int(containerPort("http").port)) {
				t.Errorf("--listen=%s, container port http is %d", listen, containerPort("http").port)
			}
			if pages, ok := arg("pages"); !ok || pages != "false" {
				t.Error("the hooks' pods serve pages: want --pages=false")
			}
			metricsListen, _ := arg("metrics-listen")
			if metricsListen != ":"+strconv.Itoa(int(containerPort("metrics").port)) {
				t.Errorf("--metrics-listen=%s, container port metrics is %d", metricsListen, containerPort("metrics").port)
			}
			if pc, ok := containers["pages"]; ok {
				want := map[string]string{"hooks": "false", "listen": ":" + strconv.Itoa(int(portOf("pages", "http").port)),
					"error-pages-listen": ":" + strconv.Itoa(int(portOf("pages", "errors").port)),
					"metrics-listen":     ":" + strconv.Itoa(int(portOf("pages", "metrics").port))}
				for flag, v := range want {
					if !slices.Contains(pc.Args, "--"+flag+"="+v) {
						t.Errorf("error-page container args %q lack --%s=%s", pc.Args, flag, v)
					}
				}
			}

			services := map[string]*corev1.Service{}
			serves := map[string]string{} // Service name: "hooks" or "pages"
			for _, o := range objs {
				if s, ok := o.typed.(*corev1.Service); ok {
					services[s.Name] = s
					for pods, l := range podsOf {
						if len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(l) {
							if serves[s.Name] != "" {
								t.Errorf("Service %s selects both Deployments' pods", s.Name)
							}
							serves[s.Name] = pods
						}
					}
					if serves[s.Name] == "" {
						t.Errorf("Service %s does not select stackdome's pods", s.Name)
					}
				}
			}
			// servicePort resolves name/namespace/port to the container port it reaches.
			servicePort := func(what, name, namespace string, p int32) port {
				t.Helper()
				s := services[name]
				if s == nil || namespace != ns {
					t.Errorf("%s: no Service %s/%s rendered", what, namespace, name)
					return port{}
				}
				for _, sp := range s.Spec.Ports {
					if sp.Port == p {
						return portOf(serves[name], sp.TargetPort.StrVal)
					}
				}
				t.Errorf("%s: Service %s has no port %d", what, name, p)
				return port{}
			}
			pagesPort := func() port { return portOf("pages", "errors") }

			cc := find[*compositeController](t, objs, "CompositeController")
			for hook, h := range map[string]*ccHook{"sync": cc.Spec.Hooks.Sync, "customize": cc.Spec.Hooks.Customize} {
				if h == nil {
					t.Fatalf("no %s hook", hook)
				}
				w := h.Webhook.Service
				if got := servicePort(hook+" hook", w.Name, w.Namespace, w.Port); got != containerPort("http") {
					t.Errorf("%s hook reaches %v, hooks listen on %v", hook, got, containerPort("http"))
				}
			}

			name, hasName := arg("error-service-name")
			errorsOn := hasName && name != ""
			if errorsOn {
				namespace, _ := arg("error-service-namespace")
				portArg, _ := arg("error-service-port")
				port, err := strconv.Atoi(portArg)
				if err != nil {
					t.Fatalf("--error-service-port=%q", portArg)
				}
				if got := servicePort("--error-service-*", name, namespace, int32(port)); got != pagesPort() {
					t.Errorf("errors Middlewares would reach %v, pages listen on %v", got, pagesPort())
				}
			}

			middlewares := map[string]*middleware{}
			for _, o := range objs {
				if m, ok := o.typed.(*middleware); ok {
					middlewares[m.Metadata.Name] = m
					if e := m.Spec.Errors; e != nil {
						if got := servicePort("Middleware "+m.Metadata.Name, e.Service.Name, m.Metadata.Namespace, e.Service.Port.IntVal); got != pagesPort() {
							t.Errorf("Middleware %s reaches %v, want the pages port", m.Metadata.Name, got)
						}
					}
				}
			}
			for _, o := range objs {
				ir, ok := o.typed.(*ingressRoute)
				if !ok {
					continue
				}
				for _, r := range ir.Spec.Routes {
					for _, m := range r.Middlewares {
						if middlewares[m.Name] == nil || (m.Namespace != "" && m.Namespace != ir.Metadata.Namespace) {
							t.Errorf("IngressRoute %s uses Middleware %s that is not rendered beside it", ir.Metadata.Name, m.Name)
						}
					}
					for _, s := range r.Services {
						if got := servicePort("IngressRoute "+ir.Metadata.Name, s.Name, ir.Metadata.Namespace, s.Port.IntVal); got != pagesPort() {
							t.Errorf("IngressRoute %s reaches %v: the catch-all must hit the pages port only", ir.Metadata.Name, got)
						}
					}
				}
			}

			for _, o := range objs {
				switch v := o.typed.(type) {
				case *networkingv1.NetworkPolicy:
					pods := "hooks"
					if isPages(o) {
						pods = "pages"
					}
					if !selects(t, &v.Spec.PodSelector, podsOf[pods]) {
						t.Errorf("the NetworkPolicy %s does not select the %s pods", v.Name, pods)
					}
					for _, rule := range v.Spec.Ingress {
						for _, p := range rule.Ports {
							portOf(pods, p.Port.StrVal)
						}
					}
				case *serviceMonitor:
					sel, err := metav1.LabelSelectorAsSelector(&v.Spec.Selector)
					if err != nil {
						t.Fatal(err)
					}
					var matched []string
					for _, s := range services {
						if sel.Matches(labels.Set(s.Labels)) {
							matched = append(matched, s.Name)
						}
					}
					// The hooks Service, whose name is the job label the
					// alerts select (stackdome.metricsSelector), and the
					// error pages' (the page counters).
					want := []string{cc.Spec.Hooks.Sync.Webhook.Service.Name}
					for name, pods := range serves {
						if pods == "pages" {
							want = append(want, name)
						}
					}
					slices.Sort(want)
					slices.Sort(matched)
					if diff := cmp.Diff(want, matched); diff != "" {
						t.Errorf("ServiceMonitor selects (-want +got):\n%s", diff)
					}
					// Every endpoint scrapes the metrics port, never the hooks port.
					for _, ep := range v.Spec.Endpoints {
						for _, name := range matched {
							target := ""
							for _, p := range services[name].Spec.Ports {
								if p.Name == ep.Port {
									target = p.TargetPort.StrVal
								}
							}
							if target == "" || portOf(serves[name], target) != portOf(serves[name], "metrics") || ep.Path != "/metrics" {
								t.Errorf("ServiceMonitor endpoint port %q path %q reaches container port %q of Service %s, want GET /metrics on the metrics port", ep.Port, ep.Path, target, name)
							}
						}
					}
					if diff := cmp.Diff([]string{ns}, v.Spec.NamespaceSelector.MatchNames); diff != "" {
						t.Errorf("ServiceMonitor namespaces (-want +got):\n%s", diff)
					}
				}
			}
		})
	}
}

func TestCompositeController(t *testing.T) {
	tests := map[string]struct {
		in                    install
		wantName, wantService string
		wantNamespace         string
		wantPort              int32
		wantResync            int32
		wantTimeout           string
		wantPodMonitors       bool // appDefaults.podMonitor.enabled lists them
	}{
		"defaults": {
			in: renderCases["defaults"], wantName: "stackdome-stackdome", wantService: "stackdome", wantNamespace: "stackdome",
			wantPort: 8080, wantResync: 60, wantTimeout: "5s",
		},
		"all flags": {
			in: renderCases["all flags"], wantName: "stackdome-stackdome", wantService: "stackdome", wantNamespace: "stackdome",
			wantPort: 80, wantResync: 120, wantTimeout: "7s", wantPodMonitors: true,
		},
		"other release": {
			in: renderCases["other release"], wantName: "platform-edge-stackdome", wantService: "edge-stackdome", wantNamespace: "platform",
			wantPort: 8080, wantResync: 60, wantTimeout: "5s",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cc := find[*compositeController](t, decode(t, render(t, tc.in)), "CompositeController")
			want := compositeController{APIVersion: "metacontroller.k8s.io/v1alpha1", Kind: "CompositeController"}
			want.Spec.GenerateSelector = true
			want.Spec.ResyncPeriodSeconds = tc.wantResync
			want.Spec.ParentResource.APIVersion = "stackdome.io/v1alpha1"
			want.Spec.ParentResource.Resource = "stackresources"
			for _, c := range []struct{ apiVersion, resource string }{
				{"v1", "services"},
				{"apps/v1", "deployments"},
				{"apps/v1", "statefulsets"},
				{"traefik.io/v1alpha1", "middlewares"},
				{"traefik.io/v1alpha1", "ingressroutes"},
				{"autoscaling/v2", "horizontalpodautoscalers"},
				{"discovery.k8s.io/v1", "endpointslices"},
				{"policy/v1", "poddisruptionbudgets"},
				{"networking.k8s.io/v1", "networkpolicies"},
			} {
				child := ccChild{APIVersion: c.apiVersion, Resource: c.resource}
				child.UpdateStrategy.Method = "InPlace"
				want.Spec.ChildResources = append(want.Spec.ChildResources, child)
			}
			// A Job is never updated: its name carries its revision.
			job := ccChild{APIVersion: "batch/v1", Resource: "jobs"}
			job.UpdateStrategy.Method = "OnDelete"
			cron := ccChild{APIVersion: "batch/v1", Resource: "cronjobs"}
			cron.UpdateStrategy.Method = "InPlace"
			want.Spec.ChildResources = append(want.Spec.ChildResources, job, cron)
			if tc.wantPodMonitors {
				child := ccChild{APIVersion: "monitoring.coreos.com/v1", Resource: "podmonitors"}
				child.UpdateStrategy.Method = "InPlace"
				want.Spec.ChildResources = append(want.Spec.ChildResources, child)
			}
			hook := func(path string) *ccHook {
				// v2: only a sync hook at v2 receives the error-page Service of
				// the release namespace the customize hook relates
				// (metacontroller/metacontroller@v4.17.2
				// pkg/controller/composite/api/v1/hooks.go).
				h := &ccHook{Version: "v2"}
				h.Webhook.Service.Name = tc.wantService
				h.Webhook.Service.Namespace = tc.wantNamespace
				h.Webhook.Service.Port = tc.wantPort
				h.Webhook.Service.Protocol = "http"
				h.Webhook.Path = path
				h.Webhook.Timeout = tc.wantTimeout
				return h
			}
			want.Spec.Hooks.Sync = hook("/sync")
			want.Spec.Hooks.Customize = hook("/customize")
			if cc.Metadata.Name != tc.wantName || cc.Metadata.Namespace != "" {
				t.Errorf("CompositeController %q in namespace %q, want cluster-scoped %q", cc.Metadata.Name, cc.Metadata.Namespace, tc.wantName)
			}
			cc.Metadata = metav1.ObjectMeta{}
			if diff := cmp.Diff(&want, cc); diff != "" {
				t.Errorf("CompositeController (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTerminationGracePeriod(t *testing.T) {
	tests := map[string]struct {
		set     []string
		want    int64
		wantErr string
	}{
		"default: drain and shutdown plus 10s": {want: 40},
		"derived from a longer shutdown":       {set: []string{"config.shutdownTimeout=1m30s"}, want: 105},
		"derived from a longer drain":          {set: []string{"config.drainDelay=1m"}, want: 95},
		"hours":                                {set: []string{"config.shutdownTimeout=1h", "config.drainDelay=0s"}, want: 3610},
		"explicit and longer":                  {set: []string{"terminationGracePeriodSeconds=31"}, want: 31},
		"explicit and equal": {
			set:     []string{"terminationGracePeriodSeconds=30"},
			wantErr: "terminationGracePeriodSeconds (30) must exceed config.drainDelay + config.shutdownTimeout (5s + 25s = 30s)",
		},
		"explicit and shorter": {
			set:     []string{"config.shutdownTimeout=2m", "terminationGracePeriodSeconds=60"},
			wantErr: "(5s + 2m = 125s)",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, err := runHelm(t, install{set: tc.set}.args("template")...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want an error containing %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := find[*appsv1.Deployment](t, decode(t, out), "Deployment").Spec.Template.Spec.TerminationGracePeriodSeconds
			if got == nil || *got != tc.want {
				t.Errorf("terminationGracePeriodSeconds = %v, want %d", got, tc.want)
			}
		})
	}
}

func TestCatchAllIngressRoute(t *testing.T) {
	objs := decode(t, render(t, install{set: []string{"errorPages.catchAll.entryPoints={websecure}"}}))
	ir := find[*ingressRoute](t, objs, "IngressRoute")
	got := ir.Spec
	if diff := cmp.Diff([]string{"websecure"}, got.EntryPoints); diff != "" {
		t.Errorf("entryPoints (-want +got):\n%s", diff)
	}
	if len(got.Routes) != 1 {
		t.Fatalf("want one route, got %d", len(got.Routes))
	}
	r := got.Routes[0]
	if r.Kind != "Rule" || r.Match != "PathPrefix(`/`)" || r.Priority != 1 {
		t.Errorf("route %s %q priority %d, want Rule PathPrefix(`/`) priority 1", r.Kind, r.Match, r.Priority)
	}
	if len(r.Middlewares) != 1 {
		t.Fatalf("want the replacePath middleware, got %+v", r.Middlewares)
	}
	mw := findNamed[*middleware](t, objs, "Middleware", r.Middlewares[0].Name)
	if mw.Spec.ReplacePath == nil || mw.Spec.ReplacePath.Path != "/_errors/404" {
		t.Errorf("catch-all Middleware %+v, want replacePath /_errors/404 so every unclaimed request is a 404", mw.Spec)
	}
}

func TestCRDIsSchemaCRD(t *testing.T) {
	chartCRD, err := os.ReadFile(filepath.Join("crds", "stackresources.stackdome.io.yaml"))
	if err != nil {
		t.Fatalf("the chart ships no StackResource CRD (run `make generate`): %v", err)
	}
	schemaCRD, err := os.ReadFile(filepath.Join(repoRoot, "schema", "crd.yaml"))
	if err != nil {
		t.Fatalf("schema/crd.yaml: %v", err)
	}
	if !bytes.Equal(chartCRD, schemaCRD) {
		t.Fatalf("chart/crds/stackresources.stackdome.io.yaml differs from schema/crd.yaml: run `make generate`\n%s",
			cmp.Diff(string(schemaCRD), string(chartCRD)))
	}
}

// TestCRDServesTheParent checks the CRD against what the CompositeController
// needs of its parent: Metacontroller ignores a parent without the status
// subresource.
func TestCRDServesTheParent(t *testing.T) {
	objs := decode(t, render(t, install{}))
	cc := find[*compositeController](t, objs, "CompositeController")
	crd := find[*customResourceDefinition](t, objs, "CustomResourceDefinition")
	group, version, _ := strings.Cut(cc.Spec.ParentResource.APIVersion, "/")
	if crd.Spec.Group != group || crd.Spec.Names.Plural != cc.Spec.ParentResource.Resource || crd.Spec.Scope != "Namespaced" {
		t.Fatalf("CRD %s %s (%s) does not serve the parent %s %s",
			crd.Spec.Group, crd.Spec.Names.Plural, crd.Spec.Scope, cc.Spec.ParentResource.APIVersion, cc.Spec.ParentResource.Resource)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name == version {
			if !v.Served || v.Subresources.Status == nil {
				t.Fatalf("version %s: served %v, status subresource %v", version, v.Served, v.Subresources.Status != nil)
			}
			if !slices.Contains(crd.Spec.Names.ShortNames, "sr") {
				t.Errorf("short names %q: NOTES and docs use `kubectl get sr`", crd.Spec.Names.ShortNames)
			}
			return
		}
	}
	t.Fatalf("the CRD does not serve %s", version)
}

// notes renders NOTES.txt, which `helm template` never prints.
func notes(t *testing.T, in install) string {
	t.Helper()
	return includeTemplate(t, in, "stackdome/templates/NOTES.txt")
}

// includeTemplate renders the named template (a file or a define) through a
// copy of the chart with a template that includes it.
func includeTemplate(t *testing.T, in install, name string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(".")); err != nil {
		t.Fatal(err)
	}
	probe := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: probe\ndata:\n  out: {{ include %q . | toJson }}\n", name)
	if err := os.WriteFile(filepath.Join(dir, "templates", "zz-probe.yaml"), []byte(probe), 0o644); err != nil {
		t.Fatal(err)
	}
	in.chartDir = dir // values files stay relative to the package directory
	out, err := runHelm(t, in.args("template", "--show-only", "templates/zz-probe.yaml")...)
	if err != nil {
		t.Fatal(err)
	}
	cm := find[*corev1.ConfigMap](t, decode(t, out), "ConfigMap")
	return cm.Data["out"]
}

func TestNotes(t *testing.T) {
	tests := map[string]struct {
		in            install
		want, notWant []string
	}{
		"defaults": {
			in: install{},
			want: []string{
				"kubectl get sr -A",
				"kubectl get compositecontroller stackdome-stackdome",
				"Traefik's default provider flags",
				"stackdome-error-pages.stackdome:8082",
				"inside 10.244.0.0/16",
				"ready when its 2 replicas are (replicaCount)",
				"ErrImagePull or ImagePullBackOff",
				"     ghcr.io/stackdome/stackdome:" + chartAppVersion(t) + "\n",
				"with no imagePullSecrets",
				"--set image.tag=<tag>",
			},
			notWant: []string{"allowEmptyServices", "WARNING", "allowCrossNamespace", "both"},
		},
		"three replicas": {
			in:      install{set: []string{"replicaCount=3"}},
			want:    []string{"ready when its 3 replicas are"},
			notWant: []string{"WARNING"},
		},
		"one replica": {
			in:   install{set: []string{"replicaCount=1"}},
			want: []string{"ready when its 1 replica is", "WARNING: one replica", "the PodDisruptionBudget\n   allows 1 unavailable"},
		},
		"one replica, no PodDisruptionBudget": {
			in:      install{set: []string{"replicaCount=1", "podDisruptionBudget.enabled=false"}},
			want:    []string{"WARNING: one replica"},
			notWant: []string{"PodDisruptionBudget"},
		},
		"pinned by digest, from a private registry": {
			in: install{set: []string{"image.digest=sha256:" + strings.Repeat("ab", 32), "imagePullSecrets[0].name=regcred", "imagePullSecrets[1].name=mirror"}},
			want: []string{
				"     ghcr.io/stackdome/stackdome@sha256:" + strings.Repeat("ab", 32) + "\n",
				"(image.repository and image.digest), with pull secrets regcred, mirror.",
				"--set image.digest=sha256:<digest>",
			},
			notWant: []string{"image.tag"},
		},
		"cross-namespace opt-in": {
			in:   install{set: []string{"errorPages.crossNamespace=true"}},
			want: []string{"providers.kubernetesCRD.allowCrossNamespace=true", "stackdome-error-pages.stackdome:8082"},
		},
		"entry-point middleware": {
			in: renderCases["entry-point middleware"],
			want: []string{
				`middlewares: ["stackdome-stackdome-errors@kubernetescrd"]`,
				"allowEmptyServices=false",
				"BEFORE uninstalling",
			},
		},
		"error pages off": {
			in:      renderCases["error pages off"],
			want:    []string{"errorPages.enabled=false"},
			notWant: []string{"allowCrossNamespace"},
		},
		"service monitor blocked by the policy": {
			in:   install{set: []string{"serviceMonitor.enabled=true"}},
			want: []string{"networkPolicy.monitoringNamespace is empty", "from the metrics port (8081)"},
		},
		"Metacontroller and Prometheus in one namespace, no pod selector": {
			in:   install{set: []string{"networkPolicy.metacontrollerNamespace=platform", "networkPolicy.monitoringNamespace=platform"}},
			want: []string{`share namespace "platform"`, "Prometheus included, may call the hooks (/sync)"},
		},
		"Metacontroller and Prometheus in one namespace, pod selectors": {
			in:      renderCases["Metacontroller and Prometheus in one namespace"],
			notWant: []string{"WARNING"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := notes(t, tc.in)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("NOTES lack %q:\n%s", w, got)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(got, w) {
					t.Errorf("NOTES contain %q:\n%s", w, got)
				}
			}
		})
	}
}

// TestCrossNamespaceIsOptIn: by default stackdome wires each app's errors
// Middleware to a Service of the app's own namespace (Traefik's default
// allowCrossNamespace=false); errorPages.crossNamespace=true passes
// --error-service-cross-namespace, and errorPages.enabled=false wins over it.
func TestCrossNamespaceIsOptIn(t *testing.T) {
	for name, tc := range map[string]struct {
		set  []string
		want bool
	}{
		"default":               {want: false},
		"opt-in":                {set: []string{"errorPages.crossNamespace=true"}, want: true},
		"opt-in, pages off":     {set: []string{"errorPages.crossNamespace=true", "errorPages.enabled=false"}, want: false},
		"explicitly same space": {set: []string{"errorPages.crossNamespace=false"}, want: false},
	} {
		t.Run(name, func(t *testing.T) {
			dep := find[*appsv1.Deployment](t, decode(t, render(t, install{set: tc.set})), "Deployment")
			got := slices.Contains(dep.Spec.Template.Spec.Containers[0].Args, "--error-service-cross-namespace")
			if got != tc.want {
				t.Errorf("--error-service-cross-namespace passed: %v, want %v (args %v)", got, tc.want, dep.Spec.Template.Spec.Containers[0].Args)
			}
		})
	}
}
