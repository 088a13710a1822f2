package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"
)

// renderRun runs `stackdome render` with args over stdin and returns its
// stdout, stderr and error.
func renderRun(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), append([]string{"render", "--now", goldenNow}, args...), strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

const validApp = `apiVersion: stackdome.io/v1alpha1
kind: StackResource
metadata: {name: api, namespace: shop}
spec: {type: Service, image: "ghcr.io/acme/api:1.4.2", host: api.example.com, tls: {certResolver: le}, errorPages: {enabled: false}, ports: [{name: http, port: 8080, public: true}]}
`

// TestRenderRefuses: a StackResource the API server or the hook refuses
// gets each problem on stderr at its field path, as kubectl prints them,
// no document on stdout, and exit status 1; the valid ones beside it are
// still printed.
func TestRenderRefuses(t *testing.T) {
	tests := map[string]struct {
		spec string
		want []string // stderr lines
	}{
		"port out of range": {
			spec: `{type: Service, image: web:1, ports: [{name: http, port: 8080}, {name: admin, port: 70000}]}`,
			want: []string{`error: StackResource "web" is invalid: spec.ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive`},
		},
		"every problem, each at its path": {
			spec: `{type: Daemon, image: " ", ports: [{name: http, port: 8080}, {name: http, port: 8080}]}`,
			want: []string{
				`error: StackResource "web" is invalid: spec.type: Unsupported value: "Daemon": supported values: "Service", "StatefulService", "Job", "CronJob"`,
				`error: StackResource "web" is invalid: spec.image: Invalid value: " ": an image is required`,
				`error: StackResource "web" is invalid: spec.ports[1].name: Duplicate value: "http"`,
				`error: StackResource "web" is invalid: spec.ports[1].port: Duplicate value: 8080`,
			},
		},
		"unknown field": {
			spec: `{type: Service, image: web:1, colour: blue, ports: [{name: http, port: 8080, weight: 2}]}`,
			want: []string{`error: StackResource "web" is invalid: strict decoding error: unknown field "spec.colour", unknown field "spec.ports[0].weight"`},
		},
		"wrong type": {
			spec: `{type: Service, image: web:1, replicas: two}`,
			want: []string{`error: StackResource "web" is invalid: invalid spec: field replicas: cannot use a JSON string as int32`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			bad := "apiVersion: stackdome.io/v1alpha1\nkind: StackResource\nmetadata: {name: web, namespace: shop}\nspec: " + tc.spec + "\n"
			out, errOut, err := renderRun(t, bad+"---\n"+validApp)
			require.EqualError(t, err, "1 of 2 StackResources invalid")
			require.Equal(t, strings.Join(tc.want, "\n")+"\n", errOut)
			require.NotContains(t, out, "/web\n", "no document of the refused StackResource")
			require.Contains(t, out, "# Source: Deployment/shop/api\n", "the valid one is printed")
		})
	}
}

// TestRenderReads: the same StackResource as YAML, as a JSON object, in a
// v1 List (YAML or JSON), with a status (as kubectl get prints it, which
// the API server drops on create) or without a namespace and --namespace
// renders the same documents.
func TestRenderReads(t *testing.T) {
	want, _, err := renderRun(t, validApp)
	require.NoError(t, err)
	require.Contains(t, want, "# Source: Service/shop/api\n")
	var obj map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(validApp), &obj))
	asJSON, err := json.Marshal(obj)
	require.NoError(t, err)
	list, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{obj}})
	require.NoError(t, err)
	listYAML, err := yaml.JSONToYAML(list)
	require.NoError(t, err)
	withStatus := validApp + "status:\n  observedGeneration: 7\n  conditions: [{type: Available, status: \"True\", reason: Serving, message: up, lastTransitionTime: \"2026-11-01T00:00:00Z\"}]\n"
	noNamespace := strings.Replace(validApp, ", namespace: shop", "", 1)

	for name, tc := range map[string]struct {
		in   string
		args []string
	}{
		"JSON":                      {in: string(asJSON)},
		"JSON List":                 {in: string(list)},
		"YAML List":                 {in: string(listYAML)},
		"empty documents around it": {in: "---\n---\n" + validApp + "---\n"},
		"a status":                  {in: withStatus},
		"--namespace":               {in: noNamespace, args: []string{"--namespace", "shop"}},
	} {
		t.Run(name, func(t *testing.T) {
			got, errOut, err := renderRun(t, tc.in, tc.args...)
			require.NoError(t, err)
			require.Empty(t, errOut)
			require.Empty(t, cmp.Diff(want, got))
		})
	}

	got, _, err := renderRun(t, noNamespace)
	require.NoError(t, err)
	require.Contains(t, got, "# Source: Deployment/default/api\n", "no namespace: default, as kubectl's")

	_, _, err = renderRun(t, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n")
	require.EqualError(t, err, "no StackResource in the input")
	_, _, err = renderRun(t, "apiVersion: stackdome.io/v1beta9\nkind: StackResource\nmetadata: {name: x}\nspec: {}\n")
	require.ErrorContains(t, err, `apiVersion "stackdome.io/v1beta9"`)
	_, _, err = renderRun(t, "kind: [\n")
	require.ErrorContains(t, err, "decoding document 1")
}

// TestRenderNotesWhatIsMissing: an object the customize rules name that
// the input does not hold is named on stderr; the answer is the cluster's
// without it.
func TestRenderNotesWhatIsMissing(t *testing.T) {
	app := strings.Replace(validApp, "ports:", `envFrom: [{secretRef: {name: api-db}}], ports:`, 1)
	out, errOut, err := renderRun(t, app)
	require.NoError(t, err)
	require.Equal(t, `note: StackResource "api": not in the input, so rendered as absent from the cluster: Secret shop/api-db`+"\n", errOut)
	digest := regexp.MustCompile(`stackdome.io/config-digest: ([0-9a-f]{64})\n`)
	absent := digest.FindStringSubmatch(out)
	require.NotNil(t, absent)

	secret := "---\napiVersion: v1\nkind: Secret\nmetadata: {name: api-db, namespace: shop}\ndata: {url: cG9zdGdyZXM6Ly8=}\n"
	out, errOut, err = renderRun(t, app+secret)
	require.NoError(t, err)
	require.Empty(t, errOut)
	present := digest.FindStringSubmatch(out)
	require.NotNil(t, present)
	require.NotEqual(t, absent[1], present[1], "the Secret's content is in the digest")
}

// TestRenderTakesThePlatformFlags: render reads the flags and STACKDOME_*
// variables the chart gives serve, so the preview is the platform's.
func TestRenderTakesThePlatformFlags(t *testing.T) {
	plain, _, err := renderRun(t, validApp)
	require.NoError(t, err)
	require.NotContains(t, plain, "kind: NetworkPolicy")
	withPolicy, _, err := renderRun(t, validApp, "--network-policy-default")
	require.NoError(t, err)
	require.Contains(t, withPolicy, "# Source: NetworkPolicy/shop/api\n")

	t.Setenv("STACKDOME_DEFAULT_REQUESTS", "cpu=100m,memory=128Mi")
	withEnv, _, err := renderRun(t, validApp)
	require.NoError(t, err)
	require.Contains(t, withEnv, "requests:\n            cpu: 100m\n            memory: 128Mi\n")
}

// TestRenderHasServesFlags: every flag of serve is one of render's, so the
// hook Deployment's args (and the chart's STACKDOME_* variables) render
// the platform's preview as they are.
func TestRenderHasServesFlags(t *testing.T) {
	var c config
	var raw rawFlags
	serve, render := defineFlags("serve", &c, &raw, io.Discard), defineFlags("render", &c, &raw, io.Discard)
	serve.VisitAll(func(f *flag.Flag) {
		if render.Lookup(f.Name) == nil {
			t.Errorf("render has no --%s", f.Name)
		}
	})
}

// TestExampleRenders: examples/payments-api.yaml is README's production
// app, the same object, and renders with nothing refused.
func TestExampleRenders(t *testing.T) {
	file, err := os.ReadFile("examples/payments-api.yaml")
	require.NoError(t, err)
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)```yaml\n(apiVersion: stackdome.io/v1alpha1\nkind: StackResource\nmetadata:\n  name: payments-api\n.*?)```").FindSubmatch(readme)
	require.NotNil(t, m, "README shows the payments-api StackResource")
	var fromFile, fromReadme map[string]any
	require.NoError(t, yaml.Unmarshal(file, &fromFile))
	require.NoError(t, yaml.Unmarshal(m[1], &fromReadme))
	require.Empty(t, cmp.Diff(fromReadme, fromFile), "README (-) and examples/payments-api.yaml (+)")

	out, _, err := renderRun(t, "", "-f", "examples/payments-api.yaml")
	require.NoError(t, err)
	require.Contains(t, out, "# Source: Deployment/payments/payments-api\n")
}
