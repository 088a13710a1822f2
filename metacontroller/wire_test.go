package metacontroller

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

func TestParseKey(t *testing.T) {
	tests := map[string]struct {
		key  string
		want Key
	}{
		"v1 name":           {key: "web", want: Key{Name: "web"}},
		"v2 namespace/name": {key: "shop/web", want: Key{Namespace: "shop", Name: "web"}},
		"empty":             {key: "", want: Key{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ParseKey(tc.key)); diff != "" {
				t.Errorf("ParseKey(%q) mismatch (-want +got):\n%s", tc.key, diff)
			}
		})
	}
}

func TestNamedFindsBothKeyForms(t *testing.T) {
	objs := Objects{
		"Service.v1":         {"web": json.RawMessage(`{"v":1}`)},
		"Deployment.apps/v1": {"shop/web": json.RawMessage(`{"v":2}`)},
	}
	raw, ok := objs.Named("Service.v1", "shop", "web")
	require.True(t, ok)
	require.JSONEq(t, `{"v":1}`, string(raw))
	raw, ok = objs.Named("Deployment.apps/v1", "shop", "web")
	require.True(t, ok)
	require.JSONEq(t, `{"v":2}`, string(raw))
	_, ok = objs.Named("Deployment.apps/v1", "other", "web")
	require.False(t, ok, "a v2 key of another namespace must not match")
	_, ok = objs.Named("StatefulSet.apps/v1", "shop", "web")
	require.False(t, ok)
}

// TestDecodeRealRequests decodes the requests a real Metacontroller v4.17.2
// sent, so the wire names are checked against the real thing.
func TestDecodeRealRequests(t *testing.T) {
	shared := os.Getenv("STACKDOME_SHARED") // else shared/ beside the repository
	if shared == "" {
		shared = filepath.Join("..", "..", "shared")
	}
	dir := filepath.Join(shared, "testdata")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared testdata not present: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "metacontroller-sync-request.sample.json"))
	require.NoError(t, err)
	var req SyncRequest
	require.NoError(t, json.Unmarshal(b, &req))
	require.NotEmpty(t, req.Parent)
	require.Contains(t, req.Children, GroupKey("Deployment", "apps/v1"))
	require.Contains(t, req.Children, GroupKey("ConfigMap", "v1"))
	require.Empty(t, req.Children[GroupKey("ConfigMap", "v1")], "empty groups are present and empty")
	require.Len(t, req.Related[GroupKey("Pod", "v1")], 2)
	_, ok := req.Children.Named("Deployment.apps/v1", "lt", "t1")
	require.True(t, ok)

	b, err = os.ReadFile(filepath.Join(dir, "metacontroller-customize-request.sample.json"))
	require.NoError(t, err)
	var creq CustomizeRequest
	require.NoError(t, json.Unmarshal(b, &creq))
	require.NotEmpty(t, creq.Parent)
}
