package mcrequest

import "fmt"

// The clock of the stand-in cluster: the chart is installed, then each
// parent is created and Metacontroller creates its children.
const (
	ParentCreated = "2026-11-29T11:00:00Z"
	ChildCreated  = "2026-11-29T11:00:05Z"
)

// LastApplied is the annotation Metacontroller keeps the object it applied
// in (metacontroller/metacontroller@v4.17.2 pkg/dynamic/apply).
const LastApplied = "metacontroller.k8s.io/last-applied-configuration"

// UID is the fixtures' uid number n: unique per n, stable across runs.
func UID(n int) string {
	return fmt.Sprintf("%08x-1f2e-4c3d-8b4a-%012x", 0x5d000000+n, 0x9e0000000000+n)
}

// Applied is desired as Metacontroller applies it for parent: in the
// parent's namespace, labelled controller-uid with the parent's uid
// (generateSelector: true).
func Applied(desired, parent Object) Object {
	o := Clone(desired)
	Meta(o)["namespace"] = Namespace(parent)
	Map(Meta(o), "labels")["controller-uid"] = Str(parent, "metadata", "uid")
	return o
}

// Observed is desired as the API server stores it once Metacontroller
// created it for parent: Applied, its last-applied annotation, the parent
// as controlling owner, uid number n (UID), resourceVersion 2000+n and
// generation 1 (but a Service's: the API server keeps none for it),
// Metacontroller's managedFields, and the server's defaults (Default).
// status is the object's status as its controller reports it; nil: none.
func Observed(desired, parent Object, n int, status map[string]any) Object {
	la := Applied(desired, parent)
	o := Clone(la)
	md := Meta(o)
	Map(md, "annotations")[LastApplied] = string(Raw(la))
	puid := Str(parent, "metadata", "uid")
	md["creationTimestamp"] = ChildCreated
	if Str(o, "kind") != "Service" { // the Service registry keeps no generation
		md["generation"] = 1
	}
	md["resourceVersion"] = fmt.Sprint(2000 + n)
	md["uid"] = UID(100 + n)
	md["ownerReferences"] = []any{map[string]any{"apiVersion": Str(parent, "apiVersion"), "blockOwnerDeletion": true,
		"controller": true, "kind": Str(parent, "kind"), "name": Name(parent), "uid": puid}}
	md["managedFields"] = []any{map[string]any{"apiVersion": Str(o, "apiVersion"), "fieldsType": "FieldsV1",
		"fieldsV1": map[string]any{
			"f:metadata": map[string]any{
				"f:annotations":     map[string]any{".": map[string]any{}, "f:" + LastApplied: map[string]any{}},
				"f:labels":          map[string]any{".": map[string]any{}},
				"f:ownerReferences": map[string]any{".": map[string]any{}, fmt.Sprintf(`k:{"uid":"%s"}`, puid): map[string]any{}},
			},
			"f:spec": map[string]any{".": map[string]any{}},
		},
		"manager": "metacontroller", "operation": "Update", "time": ChildCreated}}
	if status != nil {
		o["status"] = status
	}
	Default(o)
	return o
}
