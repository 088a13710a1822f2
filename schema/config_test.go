package schema

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

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
