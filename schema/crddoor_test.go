package schema

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// crdDoor is the API server's own admission of a StackResource, in
// process: the generated crd.yaml made into the structural schema, the
// OpenAPI schema validator and the CEL validator exactly as
// apiextensions-apiserver's customresource_handler.go builds them for a
// served version, and its registry strategy's Validate and ValidateUpdate
// (pkg/registry/customresource/strategy.go at v0.37.2), after the defaulting
// and pruning its decoder applies. It is a test dependency only: the
// stackdome binary never links it (go list -deps . holds no
// apiextensions-apiserver).
type crdDoor struct {
	structural *structuralschema.Structural
	strategy   interface {
		Validate(ctx context.Context, obj runtime.Object) field.ErrorList
		ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList
	}
}

// newCRDDoor reads schema/crd.yaml and fails the test when the API server
// would not accept the CRD itself (a bad fieldPath, a CEL rule over its
// cost budget).
func newCRDDoor(t *testing.T) *crdDoor {
	t.Helper()
	crd := crdV1(t)

	// The CRD as the API server validates a create of it.
	var internal apiextensions.CustomResourceDefinition
	require.NoError(t, apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(crd, &internal, nil))
	internal.Status.StoredVersions = []string{crd.Spec.Versions[0].Name}
	require.Empty(t, crdvalidation.ValidateCustomResourceDefinition(context.Background(), &internal), "the API server refuses crd.yaml")

	v := crd.Spec.Versions[0]
	var val apiextensions.CustomResourceValidation
	require.NoError(t, apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, &val, nil))
	s, err := structuralschema.NewStructural(val.OpenAPIV3Schema)
	require.NoError(t, err)
	s = s.DeepCopy()
	require.NoError(t, structuraldefaulting.PruneDefaults(s))
	validator, _, err := apiservervalidation.NewSchemaValidator(val.OpenAPIV3Schema)
	require.NoError(t, err)
	statusSchema := val.OpenAPIV3Schema.Properties["status"]
	statusValidator, _, err := apiservervalidation.NewSchemaValidator(&statusSchema)
	require.NoError(t, err)
	gvk := schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}
	strategy := customresource.NewStrategy(nil, crd.Spec.Scope == apiextensionsv1.NamespaceScoped, gvk, validator, statusValidator, s,
		&apiextensions.CustomResourceSubresourceStatus{}, nil, nil)
	return &crdDoor{structural: s, strategy: strategy}
}

// object is a StackResource named name with spec s as the API server
// decodes it: defaulted and pruned with the CRD's structural schema.
func (d *crdDoor) object(t *testing.T, name string, s Spec) *unstructured.Unstructured {
	t.Helper()
	b, err := json.Marshal(s)
	require.NoError(t, err)
	// The API server's decoding: whole numbers as int64, as CEL needs them.
	var spec map[string]any
	require.NoError(t, utiljson.Unmarshal(b, &spec))
	obj := map[string]any{
		"apiVersion": APIVersion, "kind": Kind,
		"metadata": map[string]any{"name": name, "namespace": "team"},
		"spec":     spec,
	}
	structuralpruning.Prune(obj, d.structural, true)
	structuraldefaulting.Default(obj, d.structural)
	return &unstructured.Unstructured{Object: obj}
}

// create is what the API server says to a create of the StackResource.
func (d *crdDoor) create(t *testing.T, name string, s Spec) field.ErrorList {
	t.Helper()
	return refusalsOnly(d.strategy.Validate(context.Background(), d.object(t, name, s)))
}

// refusalsOnly is errs without the strategy's note that it skipped the
// CEL rules (after a Required, NotSupported, TooLong or TooMany error,
// strategy.go hasBlockingErr): a note about the other errors, at no path.
func refusalsOnly(errs field.ErrorList) field.ErrorList {
	var out field.ErrorList
	for _, e := range errs {
		if e.Field == "<nil>" && strings.HasPrefix(e.Detail, "some validation rules were not checked") {
			continue
		}
		out = append(out, e)
	}
	return out
}

// update is what it says to an update from the spec old to s.
func (d *crdDoor) update(t *testing.T, name string, old, s Spec) field.ErrorList {
	t.Helper()
	o, n := d.object(t, name, old), d.object(t, name, s)
	n.SetResourceVersion("2")
	o.SetResourceVersion("1")
	return refusalsOnly(d.strategy.ValidateUpdate(context.Background(), n, o))
}
