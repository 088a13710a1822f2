package hooks

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

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
			req := metacontroller.CustomizeRequest{Parent: json.RawMessage(`{"apiVersion":"stackdome.io/v1alpha1","kind":"StackResource",` +
				`"metadata":{"name":"web","namespace":"shop","generation":1},"spec":` + tc.spec + `}`)}
			resp, err := cfg.Customize(&req)
			require.NoError(t, err)
			require.Equal(t, "pods", resp.RelatedResources[0].Resource)
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
