package schema

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	crdvalidation "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
)

// crdDoor is the API server's own admission of a StackResource's content, in
// process: the generated crd.yaml made into the structural schema, the
// OpenAPI schema validator and the CEL validator exactly as
// apiextensions-apiserver's customresource_handler.go builds them for a
// served version, applied in the order and with the gates of its registry
// strategy's Validate and ValidateUpdate
// (pkg/registry/customresource/strategy.go at v0.37.2: schema, embedded
// objects, list types, then the CEL rules unless an error blocks them, with
// ratcheting on update, which is on by default since Kubernetes 1.30), after
// the defaulting and pruning its decoder applies.
//
// The door calls those validators itself rather than building the strategy:
// the strategy's package links the API server's storage (etcd's client,
// gRPC, OpenTelemetry), about 450 packages no check here reads and a cold
// make test compiled for nothing. What the strategy adds around the
// validators (the kind and apiVersion check, ObjectMeta's declarative
// validation, the scale subresource, which this CRD does not declare) is
// about the envelope, not the spec the table refuses. It is a test
// dependency only: of apiextensions-apiserver the stackdome binary links
// the CRD's v1 types alone (stored.go), never its validators.
type crdDoor struct {
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	cel        *cel.Validator
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
	// strategy.go's NewStrategy: the CEL programs compiled once, for the resource's root.
	return &crdDoor{structural: s, schema: validator, cel: cel.NewValidator(s, true, celconfig.PerCallLimit)}
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

// create is what the API server says to a create of the StackResource:
// strategy.go's Validate, the validators its customResourceValidator and
// celValidator call.
func (d *crdDoor) create(t *testing.T, name string, s Spec) field.ErrorList {
	t.Helper()
	obj := d.object(t, name, s).Object
	errs := apiservervalidation.ValidateCustomResource(nil, obj, d.schema)
	errs = append(errs, schemaobjectmeta.Validate(context.Background(), nil, obj, d.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, d.structural, obj)...)
	return append(errs, d.rules(errs, obj, nil)...)
}

// update is what it says to an update from the spec old to s: strategy.go's
// ValidateUpdate, every validator ratcheting on what old already held.
func (d *crdDoor) update(t *testing.T, name string, old, s Spec) field.ErrorList {
	t.Helper()
	o, n := d.object(t, name, old).Object, d.object(t, name, s).Object
	ratchet := common.NewCorrelatedObject(n, o, &model.Structural{Structural: d.structural})
	errs := apiservervalidation.ValidateCustomResourceUpdate(nil, n, o, d.schema, apiservervalidation.WithRatcheting(ratchet))
	errs = append(errs, schemaobjectmeta.Validate(context.Background(), nil, n, d.structural, false)...)
	if len(structurallisttype.ValidateListSetsAndMaps(nil, d.structural, o)) == 0 {
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, d.structural, n)...)
	}
	return append(errs, d.rules(errs, n, o, cel.WithRatcheting(ratchet))...)
}

// rules is the CEL validation of obj (an update of old when old is not nil)
// unless errs already holds an error that blocks it (strategy.go
// hasBlockingErr: the API server then skips the rules and says so, a note
// left out here, at no path, about the other errors).
func (d *crdDoor) rules(errs field.ErrorList, obj, old map[string]any, opts ...cel.Option) field.ErrorList {
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return nil
		}
	}
	var oldObj any
	if old != nil {
		oldObj = old
	}
	out, _ := d.cel.Validate(context.Background(), nil, d.structural, obj, oldObj, celconfig.RuntimeCELCostBudget, opts...)
	return out
}
