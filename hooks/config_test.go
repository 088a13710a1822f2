package hooks

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/stackdome/stackdome/internal/mcrequest"
	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/schema"
)

// configFollows is the config-follows golden request, decoded for editing.
func configFollows(tb testing.TB) map[string]any {
	tb.Helper()
	var req map[string]any
	require.NoError(tb, json.Unmarshal(readFile(tb, filepath.Join("..", "testdata", "sync", "config-follows.request.json")), &req))
	return req
}

// relatedObj is the related object group/key of req.
func relatedObj(tb testing.TB, req map[string]any, group, key string) map[string]any {
	tb.Helper()
	o := mcrequest.Lookup(req, "related", group, key)
	require.NotNil(tb, o, "the request relates no %s %s", group, key)
	return o
}

// marshal is req as a body.
func marshal(tb testing.TB, req map[string]any) []byte {
	tb.Helper()
	b, err := json.Marshal(req)
	require.NoError(tb, err)
	return b
}

// templateAnnotations are the pod-template annotations of the Deployment
// an answer returns.
func templateAnnotations(tb testing.TB, body []byte) map[string]string {
	tb.Helper()
	var resp struct {
		Children []struct {
			Kind string
			Spec struct {
				Template struct {
					Metadata struct{ Annotations map[string]string }
				}
			}
		}
	}
	require.NoError(tb, json.Unmarshal(body, &resp))
	for _, c := range resp.Children {
		if c.Kind == "Deployment" {
			return c.Spec.Template.Metadata.Annotations
		}
	}
	tb.Fatalf("no Deployment in %s", body)
	return nil
}

// TestSecretDataNeverLeavesTheDigest: a sync whose related Secret carries a
// marker, and a Secret whose data is of the wrong shape, logs at debug level
// and answers, and neither the marker nor its base64 form is in a log line,
// the children or the status. The marker still rolls the pods: it is in the
// digest.
func TestSecretDataNeverLeavesTheDigest(t *testing.T) {
	const marker = "s3cr3t-MARKER-7c1f9a"
	b64 := base64.StdEncoding.EncodeToString([]byte(marker))
	for name, edit := range map[string]func(secret map[string]any){
		"data": func(s map[string]any) { s["data"] = map[string]any{"password": b64} },
		"annotation": func(s map[string]any) {
			s["data"] = map[string]any{"password": b64}
			mcrequest.Meta(s)["annotations"] = map[string]any{"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"password":"` + b64 + `"}}`}
		},
		"wrong shape":      func(s map[string]any) { s["data"] = []any{b64, marker} },
		"wrong value type": func(s map[string]any) { s["data"] = map[string]any{"password": map[string]any{"v": b64}} },
	} {
		t.Run(name, func(t *testing.T) {
			req := configFollows(t)
			edit(relatedObj(t, req, "Secret.v1", "shop/cart-db"))
			var logs bytes.Buffer
			h := fuzzHandler()
			h.Log = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			w := post(t, Router(h, func() bool { return true }, nil), "/sync", marshal(t, req))
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			require.Contains(t, logs.String(), `"parent"`, "the sync logged nothing: the test would prove nothing")
			for _, s := range []string{marker, b64} {
				require.NotContains(t, logs.String(), s, "a log line holds the Secret's data")
				require.NotContains(t, w.Body.String(), s, "the answer (children or status) holds the Secret's data")
			}
			require.NotEmpty(t, templateAnnotations(t, w.Body.Bytes())[schema.AnnotationConfigDigest])
		})
	}
}

// TestConfigDigestFollowsContent: the pod template, hence the revision,
// changes with the content of a ConfigMap or Secret that rolls the pods,
// and with nothing else: not its metadata, not its keys' order on the
// wire, not a reference with rollOnChange false.
func TestConfigDigestFollowsContent(t *testing.T) {
	base := templateAnnotations(t, mustSync(t, configFollows(t)))
	for name, tc := range map[string]struct {
		edit  func(req map[string]any)
		rolls bool
	}{
		"ConfigMap data changed": {rolls: true, edit: func(r map[string]any) {
			relatedObj(t, r, "ConfigMap.v1", "shop/cart-config")["data"] = map[string]any{"cart.yaml": "ttl: 45m\n"}
		}},
		"ConfigMap binaryData changed": {rolls: true, edit: func(r map[string]any) {
			relatedObj(t, r, "ConfigMap.v1", "shop/cart-config")["binaryData"] = map[string]any{"logo.png": "AAAA"}
		}},
		"a key moved from data to binaryData": {rolls: true, edit: func(r map[string]any) {
			o := relatedObj(t, r, "ConfigMap.v1", "shop/cart-config")
			mcrequest.Map(o, "binaryData")["cart.yaml"] = mcrequest.Map(o, "data")["cart.yaml"]
			delete(mcrequest.Map(o, "data"), "cart.yaml")
		}},
		"Secret data changed": {rolls: true, edit: func(r map[string]any) {
			relatedObj(t, r, "Secret.v1", "shop/cart-db")["data"] = map[string]any{"password": "bmV3"}
		}},
		"the optional ConfigMap appeared": {rolls: true, edit: func(r map[string]any) {
			o := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "cart-region", "namespace": "shop"}, "data": map[string]any{"region": "eu"}}
			mcrequest.Map(r, "related", "ConfigMap.v1")["shop/cart-region"] = o
		}},
		"an opted-out ConfigMap changed": {edit: func(r map[string]any) {
			relatedObj(t, r, "ConfigMap.v1", "shop/cart-flags")["data"] = map[string]any{"FLAG_EXPRESS": "off"}
		}},
		"metadata only": {edit: func(r map[string]any) {
			m := mcrequest.Meta(relatedObj(t, r, "ConfigMap.v1", "shop/cart-config"))
			m["resourceVersion"], m["labels"] = "999999", map[string]any{"x": "y"}
		}},
		"an unrelated ConfigMap": {edit: func(r map[string]any) {
			mcrequest.Map(r, "related", "ConfigMap.v1")["shop/other"] = map[string]any{"metadata": map[string]any{"name": "other", "namespace": "shop"}, "data": map[string]any{"a": "b"}}
		}},
		"a ConfigMap of that name in another namespace": {edit: func(r map[string]any) {
			mcrequest.Map(r, "related", "ConfigMap.v1")["other/cart-flags"] = map[string]any{"metadata": map[string]any{"name": "cart-flags", "namespace": "other"}, "data": map[string]any{"a": "b"}}
		}},
	} {
		t.Run(name, func(t *testing.T) {
			req := configFollows(t)
			tc.edit(req)
			got := templateAnnotations(t, mustSync(t, req))
			if tc.rolls {
				require.NotEqual(t, base[schema.AnnotationConfigDigest], got[schema.AnnotationConfigDigest])
				require.NotEqual(t, base[schema.AnnotationRevision], got[schema.AnnotationRevision])
				return
			}
			if diff := cmp.Diff(base, got); diff != "" {
				t.Fatalf("the pod template changed (-before +after):\n%s", diff)
			}
		})
	}
}

// mustSync is the handler's answer to req.
func mustSync(tb testing.TB, req map[string]any) []byte {
	tb.Helper()
	w := post(tb, fuzzRouter(tb), "/sync", marshal(tb, req))
	require.Equal(tb, http.StatusOK, w.Code, w.Body.String())
	return w.Body.Bytes()
}

// TestLargeSecret: a Secret at the API server's limit (1 MiB of data)
// goes into the digest like any other; a request that a related Secret
// pushes past the body limit is refused whole with 413, which Metacontroller
// retries, never answered with partial children.
func TestLargeSecret(t *testing.T) {
	req := configFollows(t)
	big := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{0xa5}, 1<<20))
	relatedObj(t, req, "Secret.v1", "shop/cart-db")["data"] = map[string]any{"password": big}
	body := marshal(t, req)
	w := post(t, fuzzRouter(t), "/sync", body)
	require.Equal(t, http.StatusOK, w.Code)
	require.NotContains(t, w.Body.String(), big[:64])
	require.NotEqual(t, templateAnnotations(t, mustSync(t, configFollows(t)))[schema.AnnotationConfigDigest],
		templateAnnotations(t, w.Body.Bytes())[schema.AnnotationConfigDigest])

	h := fuzzHandler()
	h.MaxBody = int64(len(body) - 1)
	w = post(t, Router(h, func() bool { return true }, nil), "/sync", body)
	require.Equal(t, http.StatusRequestEntityTooLarge, w.Code)
	require.NotContains(t, w.Body.String(), `"children"`)
}

// TestSharedConfigMapResyncCost drives what docs/performance.md states: N
// apps sharing one ConfigMap, half of them with rollOnChange false on it.
// The ConfigMap's change resyncs all N (Metacontroller enqueues every parent
// whose rule names it); each app that follows it answers a new pod template
// (one Deployment update, one rollout) and a new status revision (one status
// write); each that opted out answers exactly what it answered before (no
// write at all).
func TestSharedConfigMapResyncCost(t *testing.T) {
	const n = 40
	router := fuzzRouter(t)
	var deploymentWrites, statusWrites int
	for i := range n {
		req := configFollows(t)
		p := mcrequest.Map(req, "parent")
		name := fmt.Sprintf("app-%02d", i)
		mcrequest.Meta(p)["name"] = name
		if i%2 == 1 {
			f := mcrequest.Map(p, "spec")["files"].([]any)[0].(map[string]any)
			f["rollOnChange"] = false
		}
		before := post(t, router, "/sync", marshal(t, req))
		require.Equal(t, http.StatusOK, before.Code)
		relatedObj(t, req, "ConfigMap.v1", "shop/cart-config")["data"] = map[string]any{"cart.yaml": "ttl: 45m\n"}
		after := post(t, router, "/sync", marshal(t, req))
		require.Equal(t, http.StatusOK, after.Code)
		var b, a metacontroller.SyncResponse
		require.NoError(t, json.Unmarshal(before.Body.Bytes(), &b))
		require.NoError(t, json.Unmarshal(after.Body.Bytes(), &a))
		if !bytes.Equal(mustJSON(t, b.Children), mustJSON(t, a.Children)) {
			deploymentWrites++
			require.Equal(t, 0, i%2, "%s opted out and its children changed", name)
		}
		if !bytes.Equal(mustJSON(t, b.Status), mustJSON(t, a.Status)) {
			statusWrites++
		}
	}
	require.Equal(t, n/2, deploymentWrites)
	require.Equal(t, n/2, statusWrites)
	t.Logf("%d apps, one shared ConfigMap changed: %d syncs, %d child updates, %d status writes", n, n, deploymentWrites, statusWrites)
}
