package observed

import (
	"encoding/json"
	"net/netip"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackdome/stackdome/metacontroller"
)

// TestRelatedErrorService reads the ClusterIP of the chart's Service, reads
// one of an unexpected shape or without a usable address as seen without an
// address, and one of another name or namespace as not seen.
func TestRelatedErrorService(t *testing.T) {
	svc := ErrorService{Name: "stackdome-error-pages", Namespace: "stackdome", Port: 8082}
	a17 := netip.MustParseAddr("10.96.0.17")
	for name, tc := range map[string]struct {
		key, raw string
		want     RelatedService
	}{
		"v1 key":                  {key: "stackdome-error-pages", raw: `{"spec":{"clusterIP":"10.96.0.17","clusterIPs":["10.96.0.17"]}}`, want: seen(a17)},
		"v2 key":                  {key: "stackdome/stackdome-error-pages", raw: `{"metadata":{"namespace":"stackdome"},"spec":{"clusterIP":"10.96.0.17"}}`, want: seen(a17)},
		"primary family first":    {key: "stackdome-error-pages", raw: `{"spec":{"clusterIP":"10.96.0.17","clusterIPs":["fd00::17","10.96.0.17"]}}`, want: seen(netip.MustParseAddr("fd00::17"))},
		"other name":              {key: "other", raw: `{"spec":{"clusterIP":"10.96.0.17"}}`},
		"other namespace":         {key: "kube-system/stackdome-error-pages", raw: `{"spec":{"clusterIP":"10.96.0.17"}}`},
		"v1 key, other namespace": {key: "stackdome-error-pages", raw: `{"metadata":{"namespace":"shop"},"spec":{"clusterIP":"10.96.0.17"}}`},
		"headless":                {key: "stackdome-error-pages", raw: `{"spec":{"clusterIP":"None"}}`, want: seen()},
		"loopback":                {key: "stackdome-error-pages", raw: `{"spec":{"clusterIP":"127.0.0.1"}}`, want: seen()},
		"not an address":          {key: "stackdome-error-pages", raw: `{"spec":{"clusterIP":"ten"}}`, want: seen()},
		"spec a string":           {key: "stackdome-error-pages", raw: `{"spec":"10.96.0.17"}`, want: seen()},
		"clusterIP a number":      {key: "stackdome-error-pages", raw: `{"spec":{"clusterIP":17}}`, want: seen()},
		"not an object":           {key: "stackdome-error-pages", raw: `[1,2]`, want: seen()},
		"null":                    {key: "stackdome-error-pages", raw: `null`, want: seen()},
	} {
		t.Run(name, func(t *testing.T) {
			req := FromSyncRequest(&metacontroller.SyncRequest{Related: map[string]map[string]json.RawMessage{groupService: {tc.key: json.RawMessage(tc.raw)}}})
			got := req.errorService(svc)
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("related Service (-want +got):\n%s", diff)
			}
		})
	}
}

// seen is a related error-page Service with the addresses as.
func seen(as ...netip.Addr) RelatedService { return RelatedService{Seen: true, Addrs: as} }
