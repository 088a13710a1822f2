package hooks

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/schema"
)

// relatedTemplate is the serving request (its wiring settled and observed)
// with the chart's error-page Service replaced by "@SVC@".
func relatedTemplate(tb testing.TB) []byte {
	var req map[string]any
	require.NoError(tb, json.Unmarshal(readFile(tb, filepath.Join("..", "testdata", "sync", "serving.request.json")), &req))
	req["related"].(map[string]any)["Service.v1"] = map[string]any{"stackdome-error-pages": "@SVC@"}
	b, err := json.Marshal(req)
	require.NoError(tb, err)
	return b
}

// withoutSlice is an answer's children without the mirrored EndpointSlice,
// and its status without the ErrorPages condition.
func withoutSlice(tb testing.TB, body []byte) string {
	var resp struct {
		Status   map[string]any    `json:"status"`
		Children []json.RawMessage `json:"children"`
	}
	require.NoError(tb, json.Unmarshal(body, &resp), string(body))
	var keep []json.RawMessage
	for _, c := range resp.Children {
		var k struct{ Kind string }
		require.NoError(tb, json.Unmarshal(c, &k))
		if k.Kind != "EndpointSlice" {
			keep = append(keep, c)
		}
	}
	var conds []any
	for _, c := range resp.Status["conditions"].([]any) {
		if c.(map[string]any)["type"] != string(schema.CondErrorPages) {
			conds = append(conds, c)
		}
	}
	resp.Status["conditions"] = conds
	b, err := json.Marshal(map[string]any{"status": resp.Status, "children": keep})
	require.NoError(tb, err)
	return string(b)
}

// FuzzRelatedErrorService puts arbitrary bytes where the chart's error-page
// Service goes in the serving request: whatever it is (as Metacontroller
// sends it), the request is answered 200, the handler answers as Sync does, and nothing
// but the mirrored EndpointSlice's addresses may differ from the answer when
// no Service is related, but for the ErrorPages condition (bad input changes
// nothing else; the slice never empties: the observed address stays when the
// related one is unusable).
func FuzzRelatedErrorService(f *testing.F) {
	tmpl := relatedTemplate(f)
	var real map[string]any
	require.NoError(f, json.Unmarshal(readFile(f, filepath.Join("..", "testdata", "sync", "serving.request.json")), &real))
	svc, err := json.Marshal(real["related"].(map[string]any)["Service.v1"].(map[string]any)["stackdome-error-pages"])
	require.NoError(f, err)
	f.Add(svc)
	for _, s := range []string{`null`, `5`, `"svc"`, `[]`, `{}`, `{"spec":"10.96.0.1"}`, `{"spec":{"clusterIP":17}}`,
		`{"spec":{"clusterIP":"None"}}`, `{"spec":{"clusterIPs":["fd00::1"]}}`, `{"spec":{"clusterIPs":[]}}`, `{"spec":{"clusterIP":"127.0.0.1"}}`,
		`{"spec":{"clusterIP":"10.96.0.1"},"status":{"conditions":"x"}}`, `{"metadata":{"name":5},"spec":{"clusterIP":"10.96.0.1"}}`} {
		f.Add([]byte(s))
	}
	h := fuzzHandler()
	router := Router(h, nil, nil)
	base := post(f, router, "/sync", bytes.Replace(tmpl, []byte(`{"stackdome-error-pages":"@SVC@"}`), []byte(`{}`), 1))
	require.Equal(f, http.StatusOK, base.Code, base.Body.String())
	want := withoutSlice(f, base.Body.Bytes())
	f.Fuzz(func(t *testing.T, svc []byte) {
		body := bytes.Replace(tmpl, []byte(`"@SVC@"`), svc, 1)
		if !json.Valid(body) || DefaultBudget.Check(body) != nil {
			return // not a request as Metacontroller sends one: FuzzSync covers those
		}
		w := requireSameAsSync(t, h, router, body)
		if w.Code != http.StatusOK {
			t.Fatalf("related Service %q: %d %s", svc, w.Code, w.Body)
		}
		if got := withoutSlice(t, w.Body.Bytes()); got != want {
			t.Fatalf("related Service %q changed more than the slice and the ErrorPages condition:\n got %s\nwant %s", svc, got, want)
		}
		var resp struct{ Children []map[string]any }
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &resp))
		found := false
		for _, c := range resp.Children {
			if c["kind"] == "EndpointSlice" {
				found = true
				require.NotEmpty(t, c["endpoints"], "related Service %q emptied the slice", svc)
			}
		}
		require.True(t, found, "related Service %q lost the slice", svc)
	})
}
