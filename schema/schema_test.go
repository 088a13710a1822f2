package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestCRDIsGenerated fails when crd.yaml differs from what controller-gen
// makes of the types now: the schema is never maintained by hand.
func TestCRDIsGenerated(t *testing.T) {
	gen, err := filepath.Abs(filepath.Join("..", "bin", "controller-gen"))
	require.NoError(t, err)
	if _, err := os.Stat(gen); err != nil {
		t.Fatalf("controller-gen not built: run `make tools` (%v)", err)
	}
	cmd := exec.Command(gen, "crd:crdVersions=v1", "paths=./...", "output:crd:stdout")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	fresh, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	committed, err := os.ReadFile("crd.yaml")
	require.NoError(t, err)
	if diff := cmp.Diff(string(committed), string(fresh)); diff != "" {
		t.Errorf("schema/crd.yaml is stale; run `make generate` (-committed +fresh):\n%s", diff)
	}
}

func TestValidate(t *testing.T) {
	size := resource.MustParse("1Gi")
	zero, one, two := int32(-1), int32(1), int32(2)
	tests := map[string]struct {
		reason string
		spec   Spec
		want   string // the whole error; "" means valid
	}{
		"minimal": {reason: "type and image suffice", spec: Spec{Type: TypeService, Image: "nginx"}},
		"full stateful": {
			reason: "storage with StatefulService",
			spec: Spec{Type: TypeStatefulService, Image: "pg", Host: "db.example.com",
				Ports:   []Port{{Name: "pg", Port: 5432}, {Name: "http", Port: 80, Public: true}},
				Storage: &Storage{Size: size, MountPath: "/data"}},
		},
		"no type":      {spec: Spec{Image: "x"}, want: "invalid spec: spec.type is required (Service, StatefulService, Job or CronJob)"},
		"bad type":     {spec: Spec{Type: "Lambda", Image: "x"}, want: `invalid spec: spec.type "Lambda" is not Service, StatefulService, Job or CronJob`},
		"no image":     {spec: Spec{Type: TypeService, Image: " "}, want: "invalid spec: spec.image is required"},
		"neg replicas": {spec: Spec{Type: TypeService, Image: "x", Replicas: &zero}, want: "invalid spec: spec.replicas -1 must not be negative"},
		"dup names": {spec: Spec{Type: TypeService, Image: "x", Ports: []Port{{Name: "a", Port: 1}, {Name: "a", Port: 2}}},
			want: `invalid spec: spec.ports[1].name "a": port names must be unique`},
		"dup numbers": {spec: Spec{Type: TypeService, Image: "x", Ports: []Port{{Name: "a", Port: 1}, {Name: "b", Port: 1}}},
			want: "invalid spec: spec.ports[1].port 1: port numbers must be unique"},
		"port range": {spec: Spec{Type: TypeService, Image: "x", Ports: []Port{{Name: "a", Port: 0}, {Name: "b", Port: 70000}}},
			want: "invalid spec: spec.ports[0].port 0 must be between 1 and 65535; spec.ports[1].port 70000 must be between 1 and 65535"},
		"bad name": {spec: Spec{Type: TypeService, Image: "x", Ports: []Port{{Name: "HTTP_1", Port: 1}}},
			want: `invalid spec: spec.ports[0].name "HTTP_1": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-); ` +
				`spec.ports[0].name "HTTP_1": must contain at least one letter (a-z)`},
		"public no host": {spec: Spec{Type: TypeService, Image: "x", Ports: []Port{{Name: "a", Port: 80, Public: true}}},
			want: "invalid spec: spec.host is required when a port is public, or spec.hosts"},
		"bad host": {spec: Spec{Type: TypeService, Image: "x", Host: "Shop_Example"},
			want: `invalid spec: spec.host "Shop_Example": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		"hosts only": {reason: "hosts without host route a public port", spec: Spec{Type: TypeService, Image: "x", Hosts: []string{"a.example.com", "b.example.com"}, Ports: []Port{{Name: "a", Port: 80, Public: true}}}},
		"bad and repeated hosts": {reason: "each host is a DNS name, none twice, none repeating host",
			spec: Spec{Type: TypeService, Image: "x", Host: "a.example.com", Hosts: []string{"a.example.com", "B", "c.example.com", "c.example.com", ""}},
			want: `invalid spec: spec.hosts[0] "a.example.com": hosts must be unique and not repeat host; ` +
				`spec.hosts[1] "B": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'); ` +
				`spec.hosts[3] "c.example.com": hosts must be unique and not repeat host; ` +
				`spec.hosts[4] "": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
		"middlewares": {reason: "names required, DNS names, each once, and a public port to use them on",
			spec: Spec{Type: TypeService, Image: "x", Ports: []Port{{Name: "a", Port: 80}}, Middlewares: []MiddlewareRef{{Name: "auth"}, {Name: ""}, {Name: "Auth_1"}, {Name: "auth"}}},
			want: `invalid spec: spec.middlewares[1].name is required; ` +
				`spec.middlewares[2].name "Auth_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'); ` +
				`spec.middlewares[3].name "auth": middlewares must be unique; spec.middlewares need a public port`},
		"storage on Service": {spec: Spec{Type: TypeService, Image: "x", Storage: &Storage{Size: size, MountPath: "/d"}},
			want: "invalid spec: spec.storage is only allowed for type StatefulService"},
		"relative mount": {spec: Spec{Type: TypeStatefulService, Image: "x", Storage: &Storage{Size: size, MountPath: "d"}},
			want: `invalid spec: spec.storage.mountPath "d" must be an absolute path`},
		"zero size": {spec: Spec{Type: TypeStatefulService, Image: "x", Storage: &Storage{MountPath: "/d"}},
			want: "invalid spec: spec.storage.size must be positive"},
		"replicas with autoscaling": {spec: Spec{Type: TypeService, Image: "x", Replicas: &one, Autoscaling: &Autoscaling{MaxReplicas: 3},
			Resources: &corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}},
			want: "invalid spec: spec.replicas and spec.autoscaling cannot be set together: the HorizontalPodAutoscaler owns the number of pods"},
		"autoscaling without cpu request": {spec: Spec{Type: TypeService, Image: "x", Autoscaling: &Autoscaling{MinReplicas: &two, MaxReplicas: 1}},
			want: "invalid spec: spec.autoscaling.maxReplicas 1 must be at least 1 and at least minReplicas; spec.autoscaling needs spec.resources.requests.cpu: the HorizontalPodAutoscaler measures CPU utilization against it"},
		"tls twice, without a public port": {spec: Spec{Type: TypeService, Image: "x", TLS: &TLS{SecretName: "s", CertResolver: "r"}},
			want: "invalid spec: spec.tls takes secretName or certResolver, not both; spec.tls needs a public port"},
		"two public ports at one path": {spec: Spec{Type: TypeService, Image: "x", Host: "h.example.com",
			Ports: []Port{{Name: "web", Port: 80, Public: true}, {Name: "api", Port: 81, Public: true, Path: "/web"}, {Name: "ws", Port: 82, Public: true, Path: "/web"}}},
			want: `invalid spec: spec.ports[2] (ws) is routed at "/web" like api: public ports need distinct paths`},
		"path on a private port": {spec: Spec{Type: TypeService, Image: "x", Ports: []Port{{Name: "web", Port: 80, Path: "/x y"}}},
			want: `invalid spec: spec.ports[0].path is only for a public port; spec.ports[0].path "/x y" must start with / and hold no quotes, spaces, parentheses or operators`},
		"files": {spec: Spec{Type: TypeStatefulService, Image: "x", Storage: &Storage{Size: size, MountPath: "/data"}, Pod: Pod{Files: []File{
			{Name: "a", MountPath: "/data", ConfigMap: &corev1.ConfigMapVolumeSource{}}, {Name: "a", MountPath: "/b"}}}},
			want: `invalid spec: spec.files[0].mountPath "/data" is already mounted; spec.files[0].configMap.name is required; spec.files[1].name "a": file names must be unique; spec.files[1] takes exactly one of configMap and secret`},
		"reserved pod label and annotation": {spec: Spec{Type: TypeService, Image: "x", Pod: Pod{PodLabels: map[string]string{"pod-template-hash": "x"}, PodAnnotations: map[string]string{"stackdome.io/revision": "x"}}},
			want: "invalid spec: spec.podLabels cannot set pod-template-hash: the workload and its Service select the pods by it; spec.podAnnotations cannot set stackdome.io/revision: stackdome marks the pods of each revision with it"},
		"tolerations and spread": {spec: Spec{Type: TypeService, Image: "x", Pod: Pod{Tolerations: []corev1.Toleration{{Operator: "Exists", Value: "v", Effect: "Never"}},
			TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{}}}},
			want: `invalid spec: spec.tolerations[0]: operator Exists takes no value; spec.tolerations[0].effect "Never" must be NoSchedule, PreferNoSchedule or NoExecute; spec.topologySpreadConstraints[0].maxSkew 0 must be at least 1; spec.topologySpreadConstraints[0].topologyKey is required; spec.topologySpreadConstraints[0].whenUnsatisfiable "" must be DoNotSchedule or ScheduleAnyway`},
		"every problem at once": {
			reason: "one error names every problem, in spec order",
			spec:   Spec{Type: "", Image: "", Ports: []Port{{Name: "a", Port: 80, Public: true}, {Name: "a", Port: 80}}},
			want: "invalid spec: spec.type is required (Service, StatefulService, Job or CronJob); spec.image is required; " +
				`spec.ports[1].name "a": port names must be unique; spec.ports[1].port 80: port numbers must be unique; spec.host is required when a port is public, or spec.hosts`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := Validate(tc.spec)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	on := true
	one := int32(1)
	got := Default(Spec{Type: TypeService, Image: "x"})
	want := Spec{Type: TypeService, Image: "x", Replicas: &one, ErrorPages: &ErrorPages{Enabled: &on}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Default mismatch (-want +got):\n%s", diff)
	}
	off := false
	kept := Default(Spec{ErrorPages: &ErrorPages{Enabled: &off}})
	require.False(t, kept.ErrorPagesEnabled(), "an explicit false is kept")
}

func TestPrimaryPort(t *testing.T) {
	tests := map[string]struct {
		ports []Port
		want  string
	}{
		"first public wins": {ports: []Port{{Name: "metrics", Port: 9090}, {Name: "http", Port: 80, Public: true}}, want: "http"},
		"else the first":    {ports: []Port{{Name: "grpc", Port: 9000}, {Name: "metrics", Port: 9090}}, want: "grpc"},
		"none":              {want: ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p, _ := Spec{Ports: tc.ports}.PrimaryPort()
			require.Equal(t, tc.want, p.Name)
		})
	}
}

func TestFailureDetailEmptyTypeIsRuntimeCrash(t *testing.T) {
	var got []FailureDetail
	require.NoError(t, json.Unmarshal([]byte(`[{"reason":"OOMKilled"},{"type":"readiness_failure","port":80}]`), &got))
	require.Equal(t, RuntimeCrash, got[0].Type)
	require.Equal(t, ReadinessFailure, got[1].Type)
}

func TestCRDSaysWhatDesignRequires(t *testing.T) {
	b, err := os.ReadFile("crd.yaml")
	require.NoError(t, err)
	crd := string(b)
	for _, want := range []string{"subresources:\n      status: {}", "shortNames:\n    - sr", "name: Available", "name: Reason", "name: Type", "name: Age",
		"port names must be unique", "port numbers must be unique", "host is required when a port is public", "hosts must be unique", "hosts must not repeat host", "middlewares must be unique", "middlewares need a public port", "spec.middlewares cannot name <name>-errors", "storage is only allowed",
		"rule: self.type == oldSelf.type", "spec.storage cannot be added or removed", "spec.storage.size cannot change", "spec.storage.storageClassName cannot change"} {
		require.True(t, strings.Contains(crd, want), "crd.yaml lacks %q", want)
	}
}

// TestValidateIsDeterministic: the message of a spec with many bad map keys
// is the same every time — it becomes a status message, and a message that
// changes between syncs makes Metacontroller write status on every sync.
func TestValidateIsDeterministic(t *testing.T) {
	s := Spec{Type: TypeService, Image: "x", Pod: Pod{PodLabels: map[string]string{}, PodAnnotations: map[string]string{}, NodeSelector: map[string]string{}}}
	for i := range 20 {
		k := fmt.Sprintf("bad key %d", i)
		s.PodLabels[k], s.PodAnnotations[k], s.NodeSelector[k] = "v", "v", "v"
	}
	first := Validate(s).Error()
	for range 50 {
		require.Equal(t, first, Validate(s).Error())
	}
}

// TestValidateChildNames: a spec's Middleware named like one of the
// Middlewares stackdome makes for the resource is refused, naming it.
func TestValidateChildNames(t *testing.T) {
	spec := Spec{Middlewares: []MiddlewareRef{{Name: "shop-errors"}, {Name: "auth"}, {Name: "shop-strip"}, {Name: "shop-https"}, {Name: "other-errors"}}}
	err := ValidateChildNames("shop", spec)
	require.EqualError(t, err, `invalid spec: spec.middlewares[0].name "shop-errors" is a Middleware stackdome makes and owns for shop; `+
		`spec.middlewares[2].name "shop-strip" is a Middleware stackdome makes and owns for shop; `+
		`spec.middlewares[3].name "shop-https" is a Middleware stackdome makes and owns for shop`)
	require.NoError(t, ValidateChildNames("web", spec))
}
