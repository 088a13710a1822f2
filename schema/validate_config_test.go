package schema

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// TestValidateConfigRefs: each wrong reference is refused with its own
// message, and a right one passes.
func TestValidateConfigRefs(t *testing.T) {
	for name, tc := range map[string]struct {
		spec string
		want []string
	}{
		"right": {spec: `{"envFrom":[{"configMapRef":{"name":"c"},"rollOnChange":false}],"env":[{"name":"A","valueFrom":{"secretKeyRef":{"name":"s","key":"k"}},"rollOnChange":false}]}`},
		"envFrom without a source": {spec: `{"envFrom":[{"prefix":"X_"}]}`,
			want: []string{"spec.envFrom[0] takes exactly one of configMapRef and secretRef"}},
		"envFrom with both": {spec: `{"envFrom":[{"configMapRef":{"name":"c"},"secretRef":{"name":"s"}}]}`,
			want: []string{"spec.envFrom[0] takes exactly one of configMapRef and secretRef"}},
		"empty name": {spec: `{"envFrom":[{"secretRef":{"name":""}}]}`,
			want: []string{"spec.envFrom[0].secretRef.name is required"}},
		"bad name": {spec: `{"env":[{"name":"A","valueFrom":{"configMapKeyRef":{"name":"Bad_Name","key":"k"}}}]}`,
			want: []string{`spec.env[0].valueFrom.configMapKeyRef.name "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`}},
		"no key": {spec: `{"env":[{"name":"A","valueFrom":{"secretKeyRef":{"name":"s"}}}]}`,
			want: []string{"spec.env[0].valueFrom.secretKeyRef.key is required"}},
		"rollOnChange on a literal": {spec: `{"env":[{"name":"A","value":"v","rollOnChange":false}]}`,
			want: []string{"spec.env[0].rollOnChange needs a valueFrom.configMapKeyRef or valueFrom.secretKeyRef: there is no content to follow"}},
	} {
		t.Run(name, func(t *testing.T) {
			var s Spec
			require.NoError(t, json.Unmarshal([]byte(tc.spec), &s))
			if diff := cmp.Diff(tc.want, validateConfigRefs(s)); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestConfigRefs: every reference once, merged: optional only when every
// reference is, rolling when one reference rolls; sorted by kind and name.
func TestConfigRefs(t *testing.T) {
	var s Spec
	require.NoError(t, json.Unmarshal([]byte(`{
		"files":[{"name":"a","mountPath":"/a","configMap":{"name":"shared","optional":true},"rollOnChange":false},
		         {"name":"b","mountPath":"/b","secret":{"secretName":"tls"}}],
		"envFrom":[{"configMapRef":{"name":"shared"}},{"configMapRef":{"name":"flags","optional":true},"rollOnChange":false}],
		"env":[{"name":"A","value":"v"},{"name":"B","valueFrom":{"secretKeyRef":{"name":"tls","key":"k","optional":true}},"rollOnChange":false}]}`), &s))
	want := []ConfigRef{
		{Kind: KindConfigMap, Name: "flags", Optional: true, Roll: false},
		{Kind: KindConfigMap, Name: "shared", Optional: false, Roll: true},
		{Kind: KindSecret, Name: "tls", Optional: false, Roll: true},
	}
	if diff := cmp.Diff(want, s.ConfigRefs()); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	// The wire format of the core fields is unchanged.
	b, err := json.Marshal(s.EnvFrom[0])
	require.NoError(t, err)
	require.JSONEq(t, `{"configMapRef":{"name":"shared"}}`, string(b))
}
