package schema

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// crdV1 is schema/crd.yaml as the API server reads it.
func crdV1(t *testing.T) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	b, err := os.ReadFile("crd.yaml")
	require.NoError(t, err)
	var crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, yaml.UnmarshalStrict(b, &crd))
	require.Len(t, crd.Spec.Versions, 1)
	return &crd
}

// schemaAt is the CRD's schema at path: property names, "[*]" for a
// list's items.
func schemaAt(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, path ...string) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	s := *crd.Spec.Versions[0].Schema.OpenAPIV3Schema
	for _, p := range path {
		if p == "[*]" {
			require.NotNil(t, s.Items, "no items at %v", path)
			s = *s.Items.Schema
			continue
		}
		next, ok := s.Properties[p]
		require.True(t, ok, "crd.yaml has no %s in %v", p, path)
		s = next
	}
	return s
}

// ruleAt is the CEL rule of the schema at path whose fieldPath is fieldPath.
func ruleAt(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, fieldPath, message string, path ...string) string {
	t.Helper()
	for _, r := range schemaAt(t, crd, path...).XValidations {
		if r.FieldPath == fieldPath && strings.HasPrefix(r.Message, message) {
			return r.Rule
		}
	}
	t.Fatalf("crd.yaml has no rule at %v with fieldPath %q and message %q", path, fieldPath, message)
	return ""
}

// TestCRDStatesTheConstants: the numbers and patterns the CRD states —
// in OpenAPI keywords and as literals of its CEL rules — are the Go
// constants Validate and the hooks use. A marker changed alone fails here.
func TestCRDStatesTheConstants(t *testing.T) {
	crd := crdV1(t)
	num := func(v *float64) int {
		require.NotNil(t, v)
		return int(*v)
	}
	port := schemaAt(t, crd, "spec", "ports", "[*]", "port")
	require.Equal(t, MinPortNumber, num(port.Minimum), "spec.ports[*].port minimum")
	require.Equal(t, MaxPortNumber, num(port.Maximum), "spec.ports[*].port maximum")
	require.Equal(t, MaxDrainSeconds, num(schemaAt(t, crd, "spec", "drainSeconds").Maximum), "spec.drainSeconds maximum")
	grace := schemaAt(t, crd, "spec", "terminationGracePeriodSeconds")
	require.Equal(t, MinTerminationGracePeriodSeconds, num(grace.Minimum), "spec.terminationGracePeriodSeconds minimum")
	require.Equal(t, MaxTerminationGracePeriodSeconds, num(grace.Maximum), "spec.terminationGracePeriodSeconds maximum")
	require.Equal(t, MaxBackoffLimit, num(schemaAt(t, crd, "spec", "job", "backoffLimit").Maximum), "spec.job.backoffLimit maximum")
	for _, f := range []string{"successfulJobsHistoryLimit", "failedJobsHistoryLimit"} {
		require.Equal(t, MaxJobsHistoryLimit, num(schemaAt(t, crd, "spec", "cronJob", f).Maximum), "spec.cronJob.%s maximum", f)
	}
	require.Equal(t, MaxPorts, int(*schemaAt(t, crd, "spec", "ports").MaxItems))

	require.Equal(t, RoutePathPattern, schemaAt(t, crd, "spec", "ports", "[*]", "path").Pattern)
	require.Equal(t, RoutePathPattern, schemaAt(t, crd, "spec", "metrics", "path").Pattern)
	require.Equal(t, ImagePattern, schemaAt(t, crd, "spec", "image").Pattern)
	require.Equal(t, ImagePattern, schemaAt(t, crd, "spec", "sidecars", "[*]", "image").Pattern)

	// The CEL literals: the default drain and grace, each rule whole.
	graceOr := fmt.Sprintf("(has(self.terminationGracePeriodSeconds) ? self.terminationGracePeriodSeconds : %d)", DefaultTerminationGracePeriodSeconds)
	require.Equal(t, "!has(self.drainSeconds) || self.drainSeconds < "+graceOr,
		ruleAt(t, crd, ".drainSeconds", "drainSeconds", "spec"))
	require.Equal(t, fmt.Sprintf("has(self.drainSeconds) || !has(self.ports) || size(self.ports) == 0 || %d < %s", DefaultDrainSeconds, graceOr),
		ruleAt(t, crd, ".terminationGracePeriodSeconds", "drainSeconds", "spec"))
	require.True(t, strings.HasPrefix(drainMessage, fmt.Sprintf("drainSeconds (%d by default for an app with ports) must be less than terminationGracePeriodSeconds (%d when unset)", DefaultDrainSeconds, DefaultTerminationGracePeriodSeconds)),
		"Validate's words state the defaults")

	// The name's length, at creation.
	root := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.XValidations
	rules := make([]string, len(root))
	for i, r := range root {
		rules[i] = r.Rule
	}
	require.Contains(t, rules, fmt.Sprintf("oldSelf.hasValue() || (self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$') && size(self.metadata.name) <= %d)", MaxNameLength))
	// The reserved suffixes: TestCRDStatesTheChildSuffixes.
}

// TestCRDServesWhatDesignRequires: the status subresource, the short name
// and the printer columns docs/design.md promises.
func TestCRDServesWhatDesignRequires(t *testing.T) {
	crd := crdV1(t)
	v := crd.Spec.Versions[0]
	require.NotNil(t, v.Subresources)
	require.NotNil(t, v.Subresources.Status, "status is a subresource: Metacontroller writes it apart from spec")
	require.Contains(t, crd.Spec.Names.ShortNames, "sr")
	var columns []string
	for _, c := range v.AdditionalPrinterColumns {
		columns = append(columns, c.Name)
	}
	for _, want := range []string{"Type", "Available", "Reason", "Age"} {
		require.True(t, slices.Contains(columns, want), "no printer column %s in %v", want, columns)
	}
}
