package chart

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackdome/stackdome/internal/mcrequest"
)

// TestFixtureControllerIsTheCharts: the CompositeController every fixture
// request carries (internal/mcrequest.Controller) is the default render's:
// its child resources in order with their update strategies, its hooks,
// resync period and parent. The fixtures then say what the chart's
// Metacontroller sends. Rendered with hooks.tls.enabled=false: the TLS
// fields (https, caBundle, clientTLS, the paths' credentials hash, which
// changes with every generated CA) are the transport's, not the request's,
// and TestCompositeController holds them.
func TestFixtureControllerIsTheCharts(t *testing.T) {
	rendered := find[*compositeController](t, decode(t, render(t, install{set: []string{"hooks.tls.enabled=false"}})), "CompositeController")
	b, err := json.Marshal(mcrequest.Controller("v2"))
	if err != nil {
		t.Fatal(err)
	}
	var fixture compositeController
	if err := json.Unmarshal(b, &fixture); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rendered.Spec, fixture.Spec); diff != "" {
		t.Errorf("mcrequest.Controller is not the chart's CompositeController (-chart +fixtures):\n%s", diff)
	}
}
