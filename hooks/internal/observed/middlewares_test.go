package observed

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackdome/stackdome/metacontroller"
)

// TestRelatedMiddlewares: the spec's Middlewares that the request relates,
// in the spec's order, under either hook version's key, read alike through
// both doors (Decode, FromSyncRequest); one of another namespace or being
// deleted is missing.
func TestRelatedMiddlewares(t *testing.T) {
	names := []string{"auth", "limit", "headers"}
	for name, tc := range map[string]struct {
		related map[string]string // key → raw object
		want    []string
	}{
		"none related":        {},
		"v2 keys, spec order": {related: map[string]string{"shop/headers": `{"metadata":{"name":"headers","namespace":"shop"}}`, "shop/auth": `{"metadata":{"name":"auth","namespace":"shop"}}`}, want: []string{"auth", "headers"}},
		"v1 keys":             {related: map[string]string{"limit": `{"metadata":{"name":"limit"}}`}, want: []string{"limit"}},
		"another namespace":   {related: map[string]string{"other/auth": `{"metadata":{"name":"auth","namespace":"other"}}`, "limit": `{"metadata":{"name":"limit","namespace":"other"}}`}},
		"being deleted":       {related: map[string]string{"shop/auth": `{"metadata":{"name":"auth","namespace":"shop","deletionTimestamp":"2026-11-29T12:00:00Z"}}`}},
		"not in the spec":     {related: map[string]string{"shop/other": `{"metadata":{"name":"other","namespace":"shop"}}`}},
		"spec of any shape":   {related: map[string]string{"shop/auth": `{"metadata":{"name":"auth","namespace":"shop"},"spec":{"basicAuth":{"secret":"s"}}}`}, want: []string{"auth"}},
	} {
		t.Run(name, func(t *testing.T) {
			objs := map[string]json.RawMessage{}
			for k, v := range tc.related {
				objs[k] = json.RawMessage(v)
			}
			sr := &metacontroller.SyncRequest{Parent: json.RawMessage(`{}`), Related: map[string]map[string]json.RawMessage{groupMiddleware: objs}}
			raw := FromSyncRequest(sr)
			if diff := cmp.Diff(tc.want, raw.relatedMiddlewares("shop", names)); diff != "" {
				t.Errorf("FromSyncRequest (-want +got):\n%s", diff)
			}
			body, err := json.Marshal(sr)
			if err != nil {
				t.Fatal(err)
			}
			var one Request
			if err := Decode(body, &one, NewCache(1<<20), Budget{}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, one.relatedMiddlewares("shop", names)); diff != "" {
				t.Errorf("Decode (-want +got):\n%s", diff)
			}
		})
	}
}
