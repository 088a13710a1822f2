package hooks

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/internal/mcrequest"
	"github.com/stackdome/stackdome/metacontroller"
)

// podShapes are the related pods admission is sized for: as the kubelet
// reports them, without and with managedFields.
var podShapes = map[string]mcrequest.PodShape{
	"kubelet":               {Ports: []int32{8080, 9090}},
	"kubelet+managedFields": {Ports: []int32{8080, 9090}, ManagedFields: true},
}

// appRequest is a sync request of the serving fixture's parent, renamed to
// app in namespace ns, with pods running pods of shape: what Metacontroller
// sends for a large app.
func appRequest(tb testing.TB, ns, app string, pods int, shape mcrequest.PodShape) []byte {
	tb.Helper()
	body, err := os.ReadFile(filepath.Join("..", "testdata", "sync", "serving.request.json"))
	require.NoError(tb, err)
	var req struct {
		Parent mcrequest.Object `json:"parent"`
	}
	require.NoError(tb, json.Unmarshal(body, &req))
	p := req.Parent
	mcrequest.Meta(p)["namespace"], mcrequest.Meta(p)["name"] = ns, app
	delete(p, "status")
	cust, err := DefaultConfig().Customize(&metacontroller.CustomizeRequest{Parent: mcrequest.Raw(p)})
	require.NoError(tb, err)
	return mcrequest.Raw(mcrequest.AppSync(p, cust.RelatedResources, "75qkjkcv", pods, shape).Request())
}
