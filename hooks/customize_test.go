package hooks

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/internal/mcrequest"
	"github.com/stackdome/stackdome/metacontroller"
)

// TestCustomizeRelatesTheTeamsMiddlewares: a valid spec with a public port
// and spec.middlewares relates exactly those Middlewares, by name in the
// parent's namespace, in the spec's order; without a public port, or with a
// spec that is refused (a name of stackdome's own Middlewares), it relates
// none — so a collision can never relate stackdome's own child.
func TestCustomizeRelatesTheTeamsMiddlewares(t *testing.T) {
	cfg := Config{NoErrorService: true}
	for name, tc := range map[string]struct {
		spec string
		want []metacontroller.RelatedResourceRule // after the pods rule
	}{
		"two Middlewares": {
			spec: `{"type":"Service","image":"i","host":"a.example.com","ports":[{"name":"http","port":80,"public":true}],"middlewares":[{"name":"sso"},{"name":"limit"}]}`,
			want: []metacontroller.RelatedResourceRule{{APIVersion: "traefik.io/v1alpha1", Resource: "middlewares", Namespace: "shop", Names: []string{"sso", "limit"}}},
		},
		"no public port": {spec: `{"type":"Service","image":"i","ports":[{"name":"http","port":80}],"middlewares":[{"name":"sso"}]}`},
		"none named":     {spec: `{"type":"Service","image":"i","host":"a.example.com","ports":[{"name":"http","port":80,"public":true}]}`},
		"stackdome's own name": {
			spec: `{"type":"Service","image":"i","host":"a.example.com","ports":[{"name":"http","port":80,"public":true}],"middlewares":[{"name":"web-errors"}]}`,
		},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, rulesAfterPods(t, cfg, tc.spec)); diff != "" {
				t.Errorf("rules after the pods rule (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCustomizeRelatesTheConfig: a valid spec relates the ConfigMaps and
// Secrets its files, envFrom and env[].valueFrom name, one names rule per
// kind in the parent's namespace, each name once and sorted, opted-out ones
// included (a missing one is still named in status); an invalid spec
// relates none.
func TestCustomizeRelatesTheConfig(t *testing.T) {
	cfg := Config{NoErrorService: true}
	for name, tc := range map[string]struct {
		spec string
		want []metacontroller.RelatedResourceRule // after the pods rule
	}{
		"every kind of reference": {
			spec: `{"type":"Service","image":"i","files":[{"name":"a","mountPath":"/a","configMap":{"name":"files"},"rollOnChange":false},{"name":"b","mountPath":"/b","secret":{"secretName":"tls"}}],` +
				`"envFrom":[{"configMapRef":{"name":"files"}},{"secretRef":{"name":"db"}}],"env":[{"name":"A","valueFrom":{"configMapKeyRef":{"name":"app","key":"k"}}}]}`,
			want: []metacontroller.RelatedResourceRule{
				{APIVersion: "v1", Resource: "configmaps", Namespace: "shop", Names: []string{"app", "files"}},
				{APIVersion: "v1", Resource: "secrets", Namespace: "shop", Names: []string{"db", "tls"}},
			},
		},
		"Secrets only": {
			spec: `{"type":"Service","image":"i","env":[{"name":"A","valueFrom":{"secretKeyRef":{"name":"db","key":"k"}}}]}`,
			want: []metacontroller.RelatedResourceRule{{APIVersion: "v1", Resource: "secrets", Namespace: "shop", Names: []string{"db"}}},
		},
		"none":    {spec: `{"type":"Service","image":"i","env":[{"name":"A","value":"v"}]}`},
		"invalid": {spec: `{"type":"Service","image":"i","envFrom":[{"configMapRef":{"name":""}},{"secretRef":{"name":"db"}}]}`},
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := cfg.Customize(mcrequest.Customize(shopWeb(t, tc.spec)))
			require.NoError(t, err)
			got := resp.RelatedResources[1:]
			if len(got) == 0 {
				got = nil
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("rules after the pods rule (-want +got):\n%s", diff)
			}
		})
	}
}

// rulesAfterPods is cfg's customize answer for the StackResource shop/web of
// spec, less the pods rule every answer starts with (nil when none follow).
func rulesAfterPods(t *testing.T, cfg Config, spec string) []metacontroller.RelatedResourceRule {
	t.Helper()
	resp, err := cfg.Customize(mcrequest.Customize(shopWeb(t, spec)))
	require.NoError(t, err)
	require.Equal(t, "pods", resp.RelatedResources[0].Resource)
	if len(resp.RelatedResources) == 1 {
		return nil
	}
	return resp.RelatedResources[1:]
}

// shopWeb is the StackResource shop/web of spec (JSON) at generation 1.
func shopWeb(t *testing.T, spec string) mcrequest.Object {
	return stackResource(t, mcrequest.StackResource{Name: "web", Namespace: "shop", Generation: 1, Spec: json.RawMessage(spec)})
}
