package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
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

// TestValidate: the words users read in status (InvalidSpec): each problem
// at its field path, in spec order, joined into one line. Which rules
// refuse what is TestTwoDoors'.
func TestValidate(t *testing.T) {
	size := resource.MustParse("1Gi")
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
		"drain": {spec: Spec{Type: TypeService, Image: "x", Pod: Pod{DrainSeconds: new(int32(40))}},
			want: "invalid spec: spec.drainSeconds: Invalid value: 40: " + drainMessage},
		"every problem at once": {
			reason: "one error names every problem, in spec order",
			spec:   Spec{Type: "", Image: "", Ports: []Port{{Name: "a", Port: 80, Public: true}, {Name: "a", Port: 80}}},
			want: `invalid spec: spec.type: Unsupported value: "": supported values: "Service", "StatefulService", "Job", "CronJob"; ` +
				`spec.image: Invalid value: "": an image is required; ` +
				`spec.ports[1].name: Duplicate value: "a"; spec.ports[1].port: Duplicate value: 80; ` +
				"spec.host: Required value: host is required when a port is public, or hosts",
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
	require.EqualError(t, err, `invalid spec: spec.middlewares[0].name: Forbidden: stackdome makes and owns the Middleware shop-errors for shop; `+
		`spec.middlewares[2].name: Forbidden: stackdome makes and owns the Middleware shop-strip for shop; `+
		`spec.middlewares[3].name: Forbidden: stackdome makes and owns the Middleware shop-https for shop`)
	require.NoError(t, ValidateChildNames("web", spec))
}
