package mcrequest

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStackResourceIsStored: a parent is built only from a spec the API
// server stores as it is: one it would prune or default is refused, naming
// why.
func TestStackResourceIsStored(t *testing.T) {
	const stored = `{"type":"Service","image":"ghcr.io/acme/web:1.0","host":"web.example.com","ports":[{"name":"http","port":8080,"public":true}]}`
	tests := map[string]struct {
		spec    string
		wantErr string
	}{
		"stored":           {spec: stored},
		"an unknown field": {spec: `{"type":"Service","image":"ghcr.io/acme/web:1.0","replica":2}`, wantErr: "prunes spec.replica"},
		"a default left out": {spec: `{"type":"Service","image":"ghcr.io/acme/web:1.0","host":"web.example.com","ports":[{"name":"http","port":8080,"public":true}],"errorPages":{}}`,
			wantErr: "lacks defaults"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			p := StackResource{Name: "web", Namespace: "shop", Generation: 1, Spec: json.RawMessage(tc.spec)}
			o, err := p.Object()
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, ToObject(json.RawMessage(tc.spec)), o["spec"])
			require.Equal(t, map[string]any{}, o["status"])
			require.NotContains(t, Meta(o), "labels")
		})
	}
}
