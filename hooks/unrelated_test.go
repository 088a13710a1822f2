package hooks

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/stackdome/stackdome/internal/mcrequest"
	"github.com/stackdome/stackdome/metacontroller"
	"github.com/stackdome/stackdome/schema"
)

// TestCustomizeUnrelatedKinds: the platform chooses what Metacontroller
// caches (the chart's relate.secrets and relate.configMaps): a kind it does
// not relate gets no rule, whatever the spec uses; the other keeps its own.
func TestCustomizeUnrelatedKinds(t *testing.T) {
	spec := `{"type":"Service","image":"i","files":[{"name":"b","mountPath":"/b","secret":{"secretName":"tls"}}],` +
		`"envFrom":[{"configMapRef":{"name":"files"}},{"secretRef":{"name":"db"}}]}`
	configMaps := metacontroller.RelatedResourceRule{APIVersion: "v1", Resource: "configmaps", Namespace: "shop", Names: []string{"files"}}
	secrets := metacontroller.RelatedResourceRule{APIVersion: "v1", Resource: "secrets", Namespace: "shop", Names: []string{"db", "tls"}}
	for name, tc := range map[string]struct {
		unrelated Unrelated
		want      []metacontroller.RelatedResourceRule // after the pods rule
	}{
		"both related (the default)": {want: []metacontroller.RelatedResourceRule{configMaps, secrets}},
		"Secrets not related":        {unrelated: Unrelated{Secrets: true}, want: []metacontroller.RelatedResourceRule{configMaps}},
		"ConfigMaps not related":     {unrelated: Unrelated{ConfigMaps: true}, want: []metacontroller.RelatedResourceRule{secrets}},
		"neither related":            {unrelated: Unrelated{Secrets: true, ConfigMaps: true}},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := Config{NoErrorService: true, Unrelated: tc.unrelated}
			if diff := cmp.Diff(tc.want, rulesAfterPods(t, cfg, spec)); diff != "" {
				t.Errorf("rules after the pods rule (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSyncUnrelatedSecrets: with Secrets not related, the config-files
// request (two Secrets, two ConfigMaps) as Metacontroller then sends it —
// no Secret group at all — says so in the Config condition (Unknown,
// NotWatched, naming each Secret and the restart that applies a change),
// names no Secret missing, and rolls the pods on the ConfigMaps only: a
// change of a Secret's content cannot reach the pod template, a change of
// a ConfigMap's still does.
func TestSyncUnrelatedSecrets(t *testing.T) {
	cfg := Config{Unrelated: Unrelated{Secrets: true}}
	req := readRequest(t, filepath.Join("..", "testdata", "sync", "config-files"))
	delete(req.Related, "Secret.v1")
	resp, _, err := cfg.Sync(req, nil, testNow)
	require.NoError(t, err)

	var cond *metav1.Condition
	st := resp.Status.(schema.Status)
	for i := range st.Conditions {
		if st.Conditions[i].Type == string(schema.CondConfig) {
			cond = &st.Conditions[i]
		}
	}
	require.NotNil(t, cond, "a spec using Secrets has a Config condition")
	want := metav1.Condition{Type: string(schema.CondConfig), Status: metav1.ConditionUnknown, Reason: string(schema.ReasonNotWatched),
		Message: "not watched on this install (relate.secrets=false): Secret apps/notes-secrets, Secret apps/notes-tls. " +
			"Whether each exists is not checked, and a change of its content does not roll the pods: after changing it, run kubectl rollout restart deployment/notes -n apps",
		ObservedGeneration: cond.ObservedGeneration, LastTransitionTime: cond.LastTransitionTime}
	if diff := cmp.Diff(want, *cond); diff != "" {
		t.Errorf("Config condition (-want +got):\n%s", diff)
	}

	digest := func(req *metacontroller.SyncRequest) string {
		resp, _, err := cfg.Sync(req, nil, testNow)
		require.NoError(t, err)
		dep := mcrequest.Find(mcrequest.Objects(resp.Children), "Deployment")
		require.NotNil(t, dep, "no Deployment")
		return mcrequest.Str(mcrequest.PodTemplate(dep), "metadata", "annotations", schema.AnnotationConfigDigest)
	}
	before := digest(req)
	require.NotEmpty(t, before, "the ConfigMaps still roll the pods")

	// A Secret Metacontroller would now send anyway (a hand-made or stale
	// request) changes nothing: its kind is not read.
	withSecret := readRequest(t, filepath.Join("..", "testdata", "sync", "config-files"))
	require.Equal(t, before, digest(withSecret), "a Secret of an unrelated kind moved the pod template")

	changed := readRequest(t, filepath.Join("..", "testdata", "sync", "config-files"))
	delete(changed.Related, "Secret.v1")
	for key, raw := range changed.Related["ConfigMap.v1"] {
		m := roundTrip(t, raw)
		m["data"] = map[string]any{"changed": "yes"}
		changed.Related["ConfigMap.v1"][key] = mustJSON(t, m)
		break
	}
	require.NotEqual(t, before, digest(changed), "a ConfigMap's change no longer rolls the pods")
}
