package status

import (
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/hooks/internal/observed"
	"github.com/stackdome/stackdome/schema"
)

// TestPagesCondition is the ErrorPages condition for every state of the
// wiring a request can show.
func TestPagesCondition(t *testing.T) {
	public := schema.Default(schema.Spec{Type: schema.TypeService, Image: "app:1", Host: "h.example.com",
		Ports: []schema.Port{{Name: "http", Port: 8080, Public: true}}})
	private := schema.Default(schema.Spec{Type: schema.TypeService, Image: "app:1", Ports: []schema.Port{{Name: "http", Port: 8080}}})
	off := public
	off.ErrorPages = &schema.ErrorPages{Enabled: new(false)}
	addr := []netip.Addr{netip.MustParseAddr("10.96.0.17")}
	mw := &observed.ServiceRef{Name: "web-error-pages", Port: json.RawMessage("8082")}
	cross := testConfig()
	cross.ErrorService.CrossNamespace = true
	none := testConfig()
	none.NoErrorService = true
	type want struct {
		Present bool
		Wired   bool
		Reason  schema.Reason
	}
	for name, tc := range map[string]struct {
		cfg  Config
		spec schema.Spec
		view observed.Wiring
		want want
	}{
		"private app: no condition":       {cfg: testConfig(), spec: private, view: observed.Wiring{Related: seen(addr...)}},
		"pages off in the spec":           {cfg: testConfig(), spec: off, view: observed.Wiring{Related: seen(addr...)}},
		"no error Service installed":      {cfg: none, spec: public},
		"service not in the request":      {cfg: testConfig(), spec: public, want: want{Present: true, Reason: schema.ReasonErrorServiceNotSeen}},
		"not in the request, still wired": {cfg: testConfig(), spec: public, view: observed.Wiring{Slice: addr, ServiceObserved: true, Middleware: mw, RouteRefers: true}, want: want{Present: true, Reason: schema.ReasonErrorServiceNotSeen}},
		"service without an address":      {cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen()}, want: want{Present: true, Reason: schema.ReasonErrorServiceNoAddress}},
		"no address, the slice keeps one": {cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(), Slice: addr, ServiceObserved: true, Middleware: mw, RouteRefers: true}, want: want{Present: true, Wired: true, Reason: schema.ReasonWired}},
		"being created":                   {cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(addr...)}, want: want{Present: true, Reason: schema.ReasonWiringPending}},
		"wired":                           {cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(addr...), Slice: addr, ServiceObserved: true, Middleware: mw, RouteRefers: true}, want: want{Present: true, Wired: true, Reason: schema.ReasonWired}},
		// A new resource's route refers to the Middleware from its creation
		// (children/wiring.go): one Metacontroller could not create is no
		// wiring, nor is a Middleware whose Service is not there.
		"route refers, no Middleware":     {cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(addr...), Slice: addr, ServiceObserved: true, RouteRefers: true}, want: want{Present: true, Reason: schema.ReasonWiringPending}},
		"route refers, no mirror Service": {cfg: testConfig(), spec: public, view: observed.Wiring{Related: seen(addr...), Middleware: mw, RouteRefers: true}, want: want{Present: true, Reason: schema.ReasonWiringPending}},
		"cross-namespace, no Middleware":  {cfg: cross, spec: public, view: observed.Wiring{RouteRefers: true}, want: want{Present: true, Reason: schema.ReasonWiringPending}},
		"moving from cross-namespace, the mirror not yet observed": {cfg: testConfig(), spec: public,
			view: observed.Wiring{Related: seen(addr...), Middleware: &observed.ServiceRef{Name: "stackdome-error-pages", Namespace: "stackdome", Port: json.RawMessage("8082")}, RouteRefers: true},
			want: want{Present: true, Wired: true, Reason: schema.ReasonWired}},
		"cross-namespace, pending": {cfg: cross, spec: public, want: want{Present: true, Reason: schema.ReasonWiringPending}},
		"cross-namespace, wired":   {cfg: cross, spec: public, view: observed.Wiring{Middleware: &observed.ServiceRef{Name: "stackdome-error-pages", Namespace: "stackdome", Port: json.RawMessage("8082")}, RouteRefers: true}, want: want{Present: true, Wired: true, Reason: schema.ReasonWired}},
	} {
		t.Run(name, func(t *testing.T) {
			pv, ok := pagesCondition(tc.cfg, "web", tc.spec, tc.view)
			got := want{Present: ok, Wired: pv.status == metav1.ConditionTrue, Reason: pv.reason}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ErrorPages condition (-want +got):\n%s", diff)
			}
			if ok {
				require.Equal(t, schema.CondErrorPages, pv.typ)
				require.Contains(t, []metav1.ConditionStatus{metav1.ConditionTrue, metav1.ConditionFalse}, pv.status)
			}
			if ok && pv.status != metav1.ConditionTrue {
				require.Contains(t, pv.message, "5xx", "a False condition says what it costs")
			}
			if pv.reason == schema.ReasonErrorServiceNotSeen {
				require.Contains(t, pv.message, "stackdome/stackdome-error-pages", "it names the Service it cannot see")
				require.Contains(t, pv.message, "version v2", "and what to check")
			}
		})
	}
}

// seen is a related error-page Service with the addresses as.
func seen(as ...netip.Addr) observed.RelatedService {
	return observed.RelatedService{Seen: true, Addrs: as}
}
