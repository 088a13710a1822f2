package schema

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// crdSchema is the OpenAPI schema of the StackResource in the generated
// schema/crd.yaml, the one version it serves, as YAML decodes it.
func crdSchema(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile("crd.yaml")
	require.NoError(t, err)
	var crd struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema map[string]any `yaml:"openAPIV3Schema"`
				} `yaml:"schema"`
			} `yaml:"versions"`
		} `yaml:"spec"`
	}
	require.NoError(t, yaml.Unmarshal(b, &crd))
	require.Len(t, crd.Spec.Versions, 1)
	return crd.Spec.Versions[0].Schema.OpenAPIV3Schema
}
