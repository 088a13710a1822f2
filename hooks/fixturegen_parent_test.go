package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/stackdome/stackdome/internal/mcrequest"
)

// The fixtures' clock: NOW is testNow; earlier is 20 minutes before it,
// past every grace.
const (
	fixtureEarlier = "2026-11-29T11:40:00Z"
)

// parent is StackResource name in ns, number n, as `kubectl apply` created
// it from spec and Metacontroller last wrote its status: the client-side
// apply annotation, both managers' managedFields, uid number n,
// resourceVersion 1000+n.
func parent(name, ns, spec string, n int) mcrequest.Object {
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(spec)); err != nil {
		panic(fmt.Sprintf("spec of %s: %v", name, err))
	}
	kubectl := fmt.Sprintf(`{"apiVersion":"stackdome.io/v1alpha1","kind":"StackResource","metadata":{"annotations":{},"name":%q,"namespace":%q},"spec":%s}`+"\n",
		name, ns, compact.String())
	s := obj(spec)
	fspec := map[string]any{".": map[string]any{}}
	for k := range s {
		fspec["f:"+k] = map[string]any{}
	}
	return mcrequest.Object{
		"apiVersion": "stackdome.io/v1alpha1", "kind": "StackResource",
		"metadata": map[string]any{
			"annotations":       map[string]any{"kubectl.kubernetes.io/last-applied-configuration": kubectl},
			"creationTimestamp": mcrequest.ParentCreated, "generation": 1,
			"managedFields": []any{
				managedFields("stackdome.io/v1alpha1", "kubectl-client-side-apply", "", mcrequest.ParentCreated, map[string]any{
					"f:metadata": map[string]any{"f:annotations": map[string]any{".": map[string]any{}, "f:kubectl.kubernetes.io/last-applied-configuration": map[string]any{}}},
					"f:spec":     fspec,
				}),
				managedFields("stackdome.io/v1alpha1", "metacontroller", "status", mcrequest.ChildCreated, map[string]any{
					"f:status": map[string]any{".": map[string]any{}, "f:conditions": map[string]any{}, "f:observedGeneration": map[string]any{}, "f:revision": map[string]any{}},
				}),
			},
			"name": name, "namespace": ns, "resourceVersion": fmt.Sprint(1000 + n), "uid": mcrequest.UID(n),
		},
		"spec": s,
	}
}

// managedFields is one managedFields entry of manager (of subresource, when
// not empty) at time.
func managedFields(apiVersion, manager, subresource, time string, fields map[string]any) map[string]any {
	m := map[string]any{"apiVersion": apiVersion, "fieldsType": "FieldsV1", "fieldsV1": fields,
		"manager": manager, "operation": "Update", "time": time}
	if subresource != "" {
		m["subresource"] = subresource
	}
	return m
}
